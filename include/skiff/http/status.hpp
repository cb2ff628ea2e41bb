// Status codes and their reason phrases (RFC 9110 §15; 428, 429 and 431 from RFC 6585, 507
// from RFC 4918), kept as whole status lines so that writing one is a single copy. A reason
// phrase is optional on the wire (RFC 9112 §4), so an unlisted code gets an empty one.
#ifndef SKIFF_HTTP_STATUS_HPP
#define SKIFF_HTTP_STATUS_HPP

#include <string_view>  // std::string_view

namespace skiff {

// "HTTP/1.1 404 Not Found\r\n", or an empty view for a code not listed here.
constexpr std::string_view known_status_line(int code) noexcept {
    switch (code) {
    case 100: return "HTTP/1.1 100 Continue\r\n";
    case 101: return "HTTP/1.1 101 Switching Protocols\r\n";
    case 200: return "HTTP/1.1 200 OK\r\n";
    case 201: return "HTTP/1.1 201 Created\r\n";
    case 202: return "HTTP/1.1 202 Accepted\r\n";
    case 203: return "HTTP/1.1 203 Non-Authoritative Information\r\n";
    case 204: return "HTTP/1.1 204 No Content\r\n";
    case 205: return "HTTP/1.1 205 Reset Content\r\n";
    case 206: return "HTTP/1.1 206 Partial Content\r\n";
    case 300: return "HTTP/1.1 300 Multiple Choices\r\n";
    case 301: return "HTTP/1.1 301 Moved Permanently\r\n";
    case 302: return "HTTP/1.1 302 Found\r\n";
    case 303: return "HTTP/1.1 303 See Other\r\n";
    case 304: return "HTTP/1.1 304 Not Modified\r\n";
    case 307: return "HTTP/1.1 307 Temporary Redirect\r\n";
    case 308: return "HTTP/1.1 308 Permanent Redirect\r\n";
    case 400: return "HTTP/1.1 400 Bad Request\r\n";
    case 401: return "HTTP/1.1 401 Unauthorized\r\n";
    case 402: return "HTTP/1.1 402 Payment Required\r\n";
    case 403: return "HTTP/1.1 403 Forbidden\r\n";
    case 404: return "HTTP/1.1 404 Not Found\r\n";
    case 405: return "HTTP/1.1 405 Method Not Allowed\r\n";
    case 406: return "HTTP/1.1 406 Not Acceptable\r\n";
    case 408: return "HTTP/1.1 408 Request Timeout\r\n";
    case 409: return "HTTP/1.1 409 Conflict\r\n";
    case 410: return "HTTP/1.1 410 Gone\r\n";
    case 411: return "HTTP/1.1 411 Length Required\r\n";
    case 412: return "HTTP/1.1 412 Precondition Failed\r\n";
    case 413: return "HTTP/1.1 413 Content Too Large\r\n";
    case 414: return "HTTP/1.1 414 URI Too Long\r\n";
    case 415: return "HTTP/1.1 415 Unsupported Media Type\r\n";
    case 416: return "HTTP/1.1 416 Range Not Satisfiable\r\n";
    case 417: return "HTTP/1.1 417 Expectation Failed\r\n";
    case 421: return "HTTP/1.1 421 Misdirected Request\r\n";
    case 422: return "HTTP/1.1 422 Unprocessable Content\r\n";
    case 426: return "HTTP/1.1 426 Upgrade Required\r\n";
    case 428: return "HTTP/1.1 428 Precondition Required\r\n";
    case 429: return "HTTP/1.1 429 Too Many Requests\r\n";
    case 431: return "HTTP/1.1 431 Request Header Fields Too Large\r\n";
    case 500: return "HTTP/1.1 500 Internal Server Error\r\n";
    case 501: return "HTTP/1.1 501 Not Implemented\r\n";
    case 502: return "HTTP/1.1 502 Bad Gateway\r\n";
    case 503: return "HTTP/1.1 503 Service Unavailable\r\n";
    case 504: return "HTTP/1.1 504 Gateway Timeout\r\n";
    case 505: return "HTTP/1.1 505 HTTP Version Not Supported\r\n";
    case 507: return "HTTP/1.1 507 Insufficient Storage\r\n";  // RFC 4918 §11.5: an upload's disk
    default: return {};
    }
}

// The reason phrase of a listed code ("Not Found"), else empty.
constexpr std::string_view reason_phrase(int code) noexcept {
    std::string_view line = known_status_line(code);
    return line.empty() ? line : line.substr(13, line.size() - 15);
}

// RFC 9110 §6.4.1: 1xx, 204 and 304 responses never carry content.
constexpr bool status_allows_body(int code) noexcept {
    return code >= 200 && code != 204 && code != 304;
}

} // namespace skiff

#endif // SKIFF_HTTP_STATUS_HPP

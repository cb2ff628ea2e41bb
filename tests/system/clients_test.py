#!/usr/bin/env python3
"""Real clients against system_app, every response checked:
  curl         HTTP/1.0 and 1.1, --data-binary, a chunked upload, --no-keepalive (no TCP probes),
               Connection: close, Expect: 100-continue, one connection reused, 404, 405
  limits       the default request limits as curl meets them: 414, 431 (bytes and lines), 413
  http_client  Python's http.client: 200 keep-alive GETs, Content-Length and chunked uploads,
               HEAD, 404 and 405 on one connection
  ab           ApacheBench `ab -k`, GET and POST: none failed, none non-2xx
  wrk          wrk 1, 16 and 8 deep (wrk_check.lua checks each response's status and body)
Usage: clients_test.py BINARY {curl|limits|http_client|ab|wrk}"""
import http.client
import os
import re

from support import HELLO, check, main, run, skiff_app, tempdir

HERE = os.path.dirname(os.path.abspath(__file__))
BODY = bytes((i * 31 + 7) % 256 for i in range(200_000))   # every byte value, 200 KB


def curl(*args, timeout=20):
    rc, out, err = run(["curl", "-sS", "--max-time", "10"] + list(args), timeout)
    return rc, out, err


def curl_scenario(binary):
    with skiff_app(binary) as app, tempdir("curl") as tmp:
        url = "http://127.0.0.1:%d" % app.port
        payload = os.path.join(tmp, "body.bin")
        with open(payload, "wb") as f:
            f.write(BODY)
        for flag in ("--http1.0", "--http1.1"):   # a server answers with its own version (RFC 9110 §2.5)
            rc, out, err = curl(flag, "-i", url + "/")
            check(rc == 0 and out.startswith("HTTP/1.1 200 OK") and out.endswith("Hello, World!"),
                  "curl %s GET / is 200 Hello, World! (%r)" % (flag, out[:60] + err))
        echoed = os.path.join(tmp, "echoed.bin")
        rc, _, err = curl("--data-binary", "@" + payload, "-H", "Content-Type: application/x-test",
                          "-o", echoed, "-w", "%{http_code} %{content_type}", url + "/echo")
        check(rc == 0 and open(echoed, "rb").read() == BODY,
              "curl --data-binary of 200 KB is echoed byte for byte (%s)" % err.strip())
        rc, out, err = curl("-H", "Transfer-Encoding: chunked", "--data-binary", "@" + payload,
                            "-o", echoed, "-w", "%{http_code}", "-v", url + "/echo")
        check(rc == 0 and out == "200" and "Transfer-Encoding: chunked" in err
              and open(echoed, "rb").read() == BODY, "curl chunked upload of 200 KB is echoed (%s)" % out)
        rc, out, err = curl("--no-keepalive", "-v", url + "/", url + "/name")   # no TCP keep-alive probes
        check(rc == 0 and out == "Hello, World!skiff", "curl --no-keepalive: two requests answered (%r)" % out)
        rc, out, err = curl("-v", "-H", "Connection: close", url + "/", url + "/name")
        check(rc == 0 and out == "Hello, World!skiff" and err.count("Connected to") == 2,
              "curl with Connection: close: the server closes, curl connects again for the second")
        rc, out, err = curl("-v", url + "/", url + "/json", url + "/user/42")
        check(rc == 0 and out == 'Hello, World!{"message":"Hello, World!"}42'
              and "Re-using existing connection" in err, "curl reuses one keep-alive connection for three GETs")
        rc, out, err = curl("-H", "Expect: 100-continue", "--expect100-timeout", "5", "-v",
                            "--data-binary", "@" + payload, "-o", echoed, "-w", "%{http_code}", url + "/echo")
        check(rc == 0 and out == "200" and "HTTP/1.1 100 Continue" in err and open(echoed, "rb").read() == BODY,
              "curl Expect: 100-continue gets 100, then its body echoed")
        rc, out, err = curl("--http1.0", "-H", "Expect: 100-continue", "--data-binary", "@" + payload,
                            "-o", echoed, "-w", "%{http_code}", url + "/echo")
        check(rc == 0 and out == "200" and open(echoed, "rb").read() == BODY,
              "curl HTTP/1.0 POST with Expect is served (no 100 needed)")
        rc, out, err = curl("-o", "/dev/null", "-w", "%{http_code}", url + "/missing")
        check(rc == 0 and out == "404", "curl GET /missing is 404")
        rc, out, err = curl("-X", "DELETE", "-i", url + "/")
        check(rc == 0 and out.startswith("HTTP/1.1 405") and re.search(r"(?im)^Allow: .*GET", out),
              "curl DELETE / is 405 with Allow")
        check(app.alive(), "the server is still running")


def limits_scenario(binary):
    """The default request limits as curl meets them (docs/limits.md)."""
    with skiff_app(binary) as app, tempdir("limits") as tmp:
        url = "http://127.0.0.1:%d" % app.port
        def status(*args):
            rc, out, err = curl("-o", "/dev/null", "-w", "%{http_code}", *args)
            return out if rc == 0 else "curl failed: " + err.strip()
        check(status(url + "/user/" + "a" * 8200) == "414", "limits: a request line over 8 KiB is 414")
        check(status(url + "/user/" + "a" * 8000) == "200", "limits: a request line under 8 KiB is served")
        fields = [a for i in range(98) for a in ("-H", "X-F%d: v" % i)]   # curl adds Host, User-Agent, Accept
        check(status(*fields, url + "/") == "431", "limits: 101 field lines (max_headers 100) are 431")
        check(status(*fields[:-2], url + "/") == "200", "limits: 100 field lines are served")
        check(status("-H", "X-Big: " + "v" * 8300, url + "/") == "431", "limits: a header section over 8 KiB is 431")
        payload = os.path.join(tmp, "big.bin")
        for size, want in ((1 << 20, "200"), ((1 << 20) + 1, "413")):
            with open(payload, "wb") as f:
                f.write(b"z" * size)
            check(status("--data-binary", "@" + payload, url + "/echo") == want,
                  "limits: a body of %d bytes (max_body 1 MiB) is %s" % (size, want))
        check(status("-H", "Transfer-Encoding: chunked", "--data-binary", "@" + payload, url + "/echo") == "413",
              "limits: a chunked body over 1 MiB is 413")


def http_client_scenario(binary):
    with skiff_app(binary) as app:
        conn = http.client.HTTPConnection("127.0.0.1", app.port, timeout=5)
        try:
            statuses = []
            for i in range(200):
                conn.request("GET", "/user/%d" % i)
                r = conn.getresponse()
                statuses.append((r.status, r.read() == str(i).encode()))
            check(statuses == [(200, True)] * 200, "200 keep-alive GETs on one connection, each body its id")
            conn.request("POST", "/echo", body=BODY, headers={"Content-Type": "application/x-test"})
            r = conn.getresponse()
            check((r.status, r.getheader("Content-Type"), r.read()) == (200, "application/x-test", BODY),
                  "POST with Content-Length echoed with its Content-Type")
            conn.request("POST", "/echo", body=iter([BODY[:1000], BODY[1000:50_000], BODY[50_000:]]),
                         encode_chunked=True)
            r = conn.getresponse()
            check((r.status, r.read()) == (200, BODY), "chunked POST (three chunks) echoed")
            conn.request("HEAD", "/")
            r = conn.getresponse()
            check(r.status == 200 and r.getheader("Content-Length") == "13" and r.read() == b"",
                  "HEAD / has GET's Content-Length and no body")
            conn.request("GET", "/nope")
            r = conn.getresponse()
            check(r.status == 404 and r.read() == b"Not Found\n", "GET /nope is 404")
            conn.request("PUT", "/echo", body=b"x")
            r = conn.getresponse()
            check(r.status == 405 and "POST" in (r.getheader("Allow") or ""), "PUT /echo is 405 with Allow")
            r.read()
            conn.request("GET", "/")
            r = conn.getresponse()
            check((r.status, r.read()) == (200, HELLO), "the connection still serves after 404 and 405")
        finally:
            conn.close()


def ab_numbers(out):
    def number(label):
        m = re.search(r"^%s:\s+(\d+)" % label, out, re.M)
        return int(m.group(1)) if m else None
    return {k: number(k) for k in ("Complete requests", "Failed requests", "Non-2xx responses",
                                   "Keep-Alive requests")}


def ab_scenario(binary):
    with skiff_app(binary) as app, tempdir("ab") as tmp:
        url = "http://127.0.0.1:%d/" % app.port
        rc, out, err = run(["ab", "-k", "-q", "-n", "20000", "-c", "16", "-s", "10", url], 50)
        n = ab_numbers(out)
        check(rc == 0 and n["Complete requests"] == 20000 and n["Failed requests"] == 0
              and n["Non-2xx responses"] is None and n["Keep-Alive requests"] == 20000,
              "ab -k: 20,000 GETs over 16 keep-alive connections, none failed, none non-2xx (%s %s)" % (n, err.strip()))
        check(re.search(r"^Document Length:\s+13 bytes", out, re.M) is not None, "ab saw 13-byte bodies")
        payload = os.path.join(tmp, "post.bin")
        with open(payload, "wb") as f:
            f.write(BODY[:4096])
        rc, out, err = run(["ab", "-k", "-q", "-n", "5000", "-c", "8", "-s", "10", "-p", payload,
                            "-T", "application/x-test", url + "echo"], 50)
        n = ab_numbers(out)
        check(rc == 0 and n["Complete requests"] == 5000 and n["Failed requests"] == 0
              and n["Non-2xx responses"] is None and re.search(r"^Document Length:\s+4096 bytes", out, re.M),
              "ab -k -p: 5,000 4 KiB POSTs echoed, none failed, none non-2xx (%s)" % n)


def wrk_scenario(binary):
    with skiff_app(binary) as app:
        script = os.path.join(HERE, "wrk_check.lua")
        for depth, path, expect in ((1, "/", "Hello, World!"), (16, "/", "Hello, World!"), (8, "/user/77", "77")):
            rc, out, err = run(["wrk", "-t", "2", "-c", "16", "-d", "2s", "--timeout", "5s", "-s", script,
                                "http://127.0.0.1:%d%s" % (app.port, path), "--", str(depth), expect], 30)
            m = re.search(r"checked (\d+) bad (\d+)", out)
            total = re.search(r"(\d+) requests in", out)
            check(rc == 0 and m and int(m.group(1)) > 1000 and m.group(2) == "0" and total
                  and "Non-2xx" not in out and "Socket errors" not in out,
                  "wrk %d deep on %s: %s responses, every one 200 with its body, no socket error (%s)"
                  % (depth, path, m.group(1) if m else "?", err.strip() or out.splitlines()[-1]))


if __name__ == "__main__":
    main({"curl": curl_scenario, "limits": limits_scenario, "http_client": http_client_scenario,
          "ab": ab_scenario, "wrk": wrk_scenario}, budget=55)

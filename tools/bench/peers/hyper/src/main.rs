//! Peer: Rust hyper 0.14 + tokio.
//!
//! Worker model: WORKERS OS threads, each running its own tokio
//! *current-thread* runtime and its own SO_REUSEPORT listener on
//! 127.0.0.1:PORT (the kernel spreads connections).  With WORKERS=1 the
//! server runs entirely on the main thread: one thread does accept, parse,
//! route and write.  http1_pipeline_flush(true) is set so pipelined
//! responses are coalesced into one write (TechEmpower's hyper entry does
//! the same).
use std::convert::Infallible;
use std::net::SocketAddr;

use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::service::{make_service_fn, service_fn};
use hyper::{Body, Method, Request, Response, Server, StatusCode};

static HELLO: &[u8] = b"Hello, World!";
static JSON: &[u8] = br#"{"message":"Hello, World!"}"#;
static NOT_FOUND: &[u8] = b"Not Found\n";

fn text(ct: &'static str, body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    r
}

async fn handle(req: Request<Body>) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path();
    let m = req.method();
    if m == Method::GET {
        if path == "/" {
            return Ok(text("text/plain", Body::from(HELLO)));
        }
        if path == "/json" {
            return Ok(text("application/json", Body::from(JSON)));
        }
        if let Some(id) = path.strip_prefix("/user/") {
            if !id.is_empty() && !id.contains('/') {
                return Ok(text("text/plain", Body::from(id.to_owned())));
            }
        }
    } else if m == Method::POST && path == "/echo" {
        let ct = req
            .headers()
            .get(CONTENT_TYPE)
            .cloned()
            .unwrap_or_else(|| HeaderValue::from_static("application/octet-stream"));
        let body = match hyper::body::to_bytes(req.into_body()).await {
            Ok(b) => b,
            Err(_) => {
                let mut r = Response::new(Body::empty());
                *r.status_mut() = StatusCode::BAD_REQUEST;
                return Ok(r);
            }
        };
        let mut r = Response::new(Body::from(body));
        r.headers_mut().insert(CONTENT_TYPE, ct);
        return Ok(r);
    }
    // The contract's 404, byte for byte the same on every server (skiff's own).
    let mut r = text("text/plain", Body::from(NOT_FOUND));
    *r.status_mut() = StatusCode::NOT_FOUND;
    Ok(r)
}

fn listener(addr: SocketAddr) -> std::net::TcpListener {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
    s.set_reuse_address(true).expect("SO_REUSEADDR");
    s.set_reuse_port(true).expect("SO_REUSEPORT");
    s.set_nonblocking(true).expect("nonblocking");
    s.bind(&addr.into()).expect("bind");
    s.listen(4096).expect("listen");
    s.into()
}

fn serve(addr: SocketAddr) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let server = Server::from_tcp(listener(addr))
            .expect("from_tcp")
            .http1_only(true)
            .http1_pipeline_flush(true)
            .tcp_nodelay(true)
            .serve(make_service_fn(|_conn| async {
                Ok::<_, Infallible>(service_fn(handle))
            }));
        if let Err(e) = server.await {
            eprintln!("server error: {e}");
        }
    });
}

fn main() {
    let port: u16 = std::env::var("PORT").ok().and_then(|v| v.parse().ok()).unwrap_or(8080);
    let workers: usize = std::env::var("WORKERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    eprintln!("hyper: listening on {addr} ({workers} current-thread runtime(s))");
    let handles: Vec<_> = (1..workers)
        .map(|_| std::thread::spawn(move || serve(addr)))
        .collect();
    serve(addr);
    for h in handles {
        let _ = h.join();
    }
}

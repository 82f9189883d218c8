//! A loopback HTTPS server for the tests, standing in for a hostile Puppet Server or
//! PuppetDB: a CA made at test time signs its certificate for 127.0.0.1 (and a client
//! certificate, for PuppetDB's side), and a handler chooses each answer, a redirect or a
//! trickle. A plain TCP listener beside it tells whether anything reached it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::report::https::ClientIdentity;

/// A request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path and query.
    pub path: String,
    pub body: String,
}

/// How the server answers one request.
pub enum Reply {
    /// A whole answer: the status, header lines, the body.
    Answer {
        status: u16,
        headers: Vec<(String, Vec<u8>)>,
        body: Vec<u8>,
    },
    /// Headers that announce a large JSON body, then one byte of it every `every`, for as
    /// long as the client stays.
    Trickle { every: Duration },
}

impl Reply {
    /// A 200 with `body` as JSON.
    pub fn json(body: impl Into<Vec<u8>>) -> Self {
        Reply::Answer {
            status: 200,
            headers: vec![("Content-Type".to_owned(), b"application/json".to_vec())],
            body: body.into(),
        }
    }

    /// A redirect to `location` (its bytes as given).
    pub fn redirect(status: u16, location: &[u8]) -> Self {
        Reply::Answer {
            status,
            headers: vec![("Location".to_owned(), location.to_vec())],
            body: Vec::new(),
        }
    }
}

/// The files a client needs: the CA to verify the server with and a client identity the
/// same CA signed, in a temporary directory.
pub struct Pki {
    _dir: tempfile::TempDir,
    pub ca: PathBuf,
    pub client: ClientIdentity,
    server: Arc<rustls::ServerConfig>,
}

impl Pki {
    pub fn new() -> Self {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "Puppet CA: test");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);

        let server_key = KeyPair::generate().unwrap();
        let server_cert = CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .unwrap()
            .signed_by(&server_key, &issuer)
            .unwrap();
        let client_key = KeyPair::generate().unwrap();
        let mut client_params =
            CertificateParams::new(vec!["load1.example.com".to_owned()]).unwrap();
        client_params
            .distinguished_name
            .push(DnType::CommonName, "load1.example.com");
        let client_cert = client_params.signed_by(&client_key, &issuer).unwrap();

        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, ca_cert.pem()).unwrap();
        let client = ClientIdentity {
            cert: dir.path().join("load1.pem"),
            key: dir.path().join("load1.key.pem"),
        };
        std::fs::write(&client.cert, client_cert.pem()).unwrap();
        std::fs::write(&client.key, client_key.serialize_pem()).unwrap();

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(server_cert.der().to_vec())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
            )
            .unwrap();
        Pki {
            _dir: dir,
            ca,
            client,
            server: Arc::new(server),
        }
    }

    /// Serves HTTPS on a loopback port, `handler` answering each request, until the test
    /// process ends.
    pub fn serve(&self, handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = Arc::clone(&self.server);
        let handler = Arc::new(handler);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let config = Arc::clone(&config);
                let handler = Arc::clone(&handler);
                std::thread::spawn(move || {
                    let _ = serve_one(stream, config, &*handler);
                });
            }
        });
        TestServer { port }
    }
}

pub struct TestServer {
    pub port: u16,
}

impl TestServer {
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }
}

/// One connection: a TLS handshake, one request, its reply.
fn serve_one(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    handler: &dyn Fn(&Request) -> Reply,
) -> std::io::Result<()> {
    let connection = rustls::ServerConnection::new(config).map_err(std::io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(connection, stream);
    let request = read_request(&mut tls)?;
    match handler(&request) {
        Reply::Answer {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} Test\r\n").into_bytes();
            for (name, value) in headers {
                head.extend_from_slice(name.as_bytes());
                head.extend_from_slice(b": ");
                head.extend_from_slice(&value);
                head.extend_from_slice(b"\r\n");
            }
            head.extend_from_slice(
                format!(
                    "Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            );
            tls.write_all(&head)?;
            tls.write_all(&body)?;
            tls.flush()?;
            tls.conn.send_close_notify();
            tls.flush()
        }
        Reply::Trickle { every } => {
            tls.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                  Content-Length: 100000000\r\nConnection: close\r\n\r\n[",
            )?;
            tls.flush()?;
            loop {
                std::thread::sleep(every);
                tls.write_all(b" ")?;
                tls.flush()?;
            }
        }
    }
}

/// The request line, the headers and (by Content-Length) the body.
fn read_request(tls: &mut impl Read) -> std::io::Result<Request> {
    let mut data = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = tls.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        data.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut words = head.split_whitespace();
    let method = words.next().unwrap_or_default().to_owned();
    let path = words.next().unwrap_or_default().to_owned();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = tls.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        data.extend_from_slice(&chunk[..n]);
    }
    Ok(Request {
        method,
        path,
        body: String::from_utf8_lossy(&data[head_end..]).into_owned(),
    })
}

/// A plain TCP listener on loopback that only notes whether anything connected to it:
/// where a redirect would have sent the client.
pub struct Witness {
    pub port: u16,
    contacted: Arc<AtomicBool>,
}

impl Witness {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let contacted = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&contacted);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                seen.store(true, Ordering::SeqCst);
                // Answer like a plain HTTP server, so that a client that got here
                // would take what it says.
                if let Ok(mut stream) = stream {
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                    );
                }
            }
        });
        Witness { port, contacted }
    }

    pub fn contacted(&self) -> bool {
        self.contacted.load(Ordering::SeqCst)
    }
}

//! A DNS server on a loopback UDP port that answers from the records it is
//! given (TXT and MX), NXDOMAIN for a name it holds nothing at, and no
//! answer (NOERROR) for a type it holds none of at a name it knows: the
//! mail domain's records as `restock doctor` looks them up.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};
use hickory_proto::rr::rdata::{MX, TXT};
use hickory_proto::rr::{Name, RData, Record};

/// The fake.
pub struct DnsFake {
    /// Where it listens.
    pub at: SocketAddr,
    records: Arc<Mutex<Vec<Record>>>,
}

fn name(n: &str) -> Name {
    Name::from_ascii(format!("{}.", n.trim_end_matches('.'))).expect("a DNS name")
}

impl DnsFake {
    /// Starts it with no records, on a thread of its own (it answers while
    /// a test blocks its runtime on a child process).
    pub async fn start() -> Self {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
        let at = socket.local_addr().expect("addr");
        let records: Arc<Mutex<Vec<Record>>> = Arc::default();
        let held = records.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1500];
            while let Ok((len, from)) = socket.recv_from(&mut buf) {
                let Ok(query) = Message::from_vec(&buf[..len]) else {
                    continue;
                };
                let answer = answer(&query, &held.lock().expect("lock"));
                let _ = socket.send_to(&answer.to_vec().expect("encodes"), from);
            }
        });
        Self { at, records }
    }

    /// Adds a TXT record.
    pub fn txt(&self, at: &str, value: &str) -> &Self {
        let record =
            Record::from_rdata(name(at), 300, RData::TXT(TXT::new(vec![value.to_owned()])));
        self.records.lock().expect("lock").push(record);
        self
    }

    /// Adds an MX record.
    pub fn mx(&self, at: &str, exchange: &str) -> &Self {
        let record = Record::from_rdata(name(at), 300, RData::MX(MX::new(10, name(exchange))));
        self.records.lock().expect("lock").push(record);
        self
    }

    /// Removes every record at `at`.
    pub fn clear(&self, at: &str) {
        let gone = name(at);
        self.records
            .lock()
            .expect("lock")
            .retain(|r| r.name() != &gone);
    }
}

fn answer(query: &Message, records: &[Record]) -> Message {
    let mut reply = Message::new();
    reply
        .set_id(query.id())
        .set_message_type(MessageType::Response)
        .set_op_code(OpCode::Query)
        .set_recursion_desired(query.recursion_desired())
        .set_recursion_available(true)
        .set_authoritative(true);
    let Some(q) = query.queries().first() else {
        reply.set_response_code(ResponseCode::FormErr);
        return reply;
    };
    reply.add_query(q.clone());
    let at_name: Vec<&Record> = records.iter().filter(|r| r.name() == q.name()).collect();
    if at_name.is_empty() {
        reply.set_response_code(ResponseCode::NXDomain);
    }
    reply.add_answers(
        at_name
            .into_iter()
            .filter(|r| r.record_type() == q.query_type())
            .cloned(),
    );
    reply
}

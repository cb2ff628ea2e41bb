// examples/websocket to its contract, from Node.js with the `ws` library (Debian: node-ws):
// text and binary echoed with their type, a message ws sends in two frames (fin: false, then
// the rest), 1 MiB and 16 MiB messages whole, a ping's pong with its payload, two clients on
// /chat hearing each other, and a close the client starts ending with its code echoed.
// Prints "ok: ..." for each check; exits 1 at the first that fails (or after 60 s).
// Usage: node websocket_client.js PORT (websocket_clients_test.py runs it).
'use strict';

const crypto = require('crypto');
const WebSocket = require('ws');

const port = process.argv[2];
const big = 16 * 1024 * 1024;

function check(condition, what) {
  if (!condition) throw new Error('FAILED: ' + what);
  console.log('ok: ' + what);
}

// A connected client, and its messages in the order they came (next() waits for one).
async function connect(path) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { maxPayload: big + 1 });
  const got = [];
  const waiting = [];
  ws.on('message', (data, isBinary) => {
    const m = { data, isBinary };
    if (waiting.length) waiting.shift()(m);
    else got.push(m);
  });
  ws.next = () => (got.length ? Promise.resolve(got.shift()) : new Promise((resolve) => waiting.push(resolve)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return ws;
}

function closed(ws) {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

async function echo() {
  const ws = await connect('/echo');
  ws.send('héllo, wörld');
  let m = await ws.next();
  check(!m.isBinary && m.data.toString() === 'héllo, wörld', 'a text message comes back as text');
  ws.send(Buffer.from([0, 1, 2, 255]));
  m = await ws.next();
  check(m.isBinary && m.data.equals(Buffer.from([0, 1, 2, 255])), 'a binary message comes back as binary');
  ws.send('frag', { fin: false });
  ws.send('mented ✓', { fin: true });
  m = await ws.next();
  check(!m.isBinary && m.data.toString() === 'fragmented ✓', 'a message sent in two frames comes back whole');
  for (const size of [1024 * 1024, big]) {
    const data = crypto.randomBytes(size);
    ws.send(data);
    m = await ws.next();
    check(m.isBinary && m.data.equals(data), `a ${size}-byte message comes back whole`);
  }
  const pong = new Promise((resolve) => ws.once('pong', resolve));
  ws.ping(Buffer.from('are you there'));
  check((await pong).toString() === 'are you there', 'a ping is answered with a pong carrying its payload');
  const end = closed(ws);
  ws.close(4000, 'done here');
  check((await end).code === 4000, 'a close the client starts: the server echoes its code');
}

// Each client says it joined and waits to hear itself: then the server has it in the room
// (its on_open ran before its message was read), and clients already there hear it too.
async function join(name, others) {
  const ws = await connect('/chat');
  ws.send(name + ' joined');
  for (const c of [ws, ...others]) {
    const m = await c.next();
    check(!m.isBinary && m.data.toString() === name + ' joined', `${name} joined: heard on /chat`);
  }
  return ws;
}

async function chat() {
  const a = await join('a', []);
  const b = await join('b', [a]);
  b.send(Buffer.from('binary is ignored'));
  a.send('hello from a');
  for (const c of [a, b]) {
    const m = await c.next();
    check(!m.isBinary && m.data.toString() === 'hello from a', 'every client in the room hears a, not b\'s binary');
  }
  const end = closed(a);
  a.close();
  check((await end).code === 1005, 'a close with no code: the echo carries none either (1005)');
  b.terminate();
}

setTimeout(() => {
  console.log('FAILED: not done in 60 s');
  process.exit(1);
}, 60000);

(async () => {
  await echo();
  await chat();
  console.log('node ws: passed');
  process.exit(0);
})().catch((e) => {
  console.log(e.message);
  process.exit(1);
});

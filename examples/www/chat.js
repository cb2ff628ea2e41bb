// The chat page's script (chat.html): one WebSocket to /chat on the host that served the page
// (wss: where the page came over https:), each text message received shown as a list item, the
// form's text sent as one message, and the connection's state shown as it changes. No
// reconnecting: a closed room says so, and a reload joins again.
//
// ?say=TEXT sends TEXT through the form once connected (how chat_browser_test.py speaks from
// the page). Messages carry no sender, so a link that says something for its visitor says
// nothing that anyone could not say in the room directly.
'use strict';
(function () {
  const state = document.getElementById('state');
  const list = document.getElementById('messages');
  const form = document.getElementById('send');
  const input = document.getElementById('text');
  const button = form.querySelector('button');
  // The newest messages shown; older ones are removed, so a page left open does not grow.
  const keep = 200;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = new WebSocket(scheme + '//' + location.host + '/chat');

  function show(what) {
    state.textContent = what;
  }

  function add(text) {
    const item = document.createElement('li');
    item.textContent = text;  // never innerHTML: the text is anyone's
    list.appendChild(item);
    while (list.children.length > keep) list.firstElementChild.remove();
  }

  socket.addEventListener('open', function () {
    show('open');
    button.disabled = false;
    const say = new URLSearchParams(location.search).get('say');
    if (say) {
      input.value = say;
      form.requestSubmit();
    }
  });
  // The room forwards text only; a Blob (binary) is not shown.
  socket.addEventListener('message', function (e) {
    if (typeof e.data === 'string') add(e.data);
  });
  // An error is always followed by close, which says the code (1006: the connection was lost).
  socket.addEventListener('close', function (e) {
    show('closed (' + e.code + ')');
    button.disabled = true;
  });
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    if (socket.readyState !== WebSocket.OPEN || input.value === '') return;
    socket.send(input.value);
    input.value = '';
    input.focus();
  });
})();

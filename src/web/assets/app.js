// The teamlead web view. Every string from the server is set with textContent (never as
// markup); the server has already escaped control sequences as the terminal shows them.
'use strict';

const COLORS = ['red', 'blue', 'green', 'yellow', 'purple', 'orange', 'pink', 'cyan'];
const view = { team: '', members: [], requests: { permissions: [], plans: [] }, tasks: [], transcript: [], receipts: {}, exited: false };
let session = null;
let source = null;
// Requests whose "always" or "no" step is open (by key), so a redraw keeps it open.
const steps = {};

function $(id) { return document.getElementById(id); }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function colored(e, color) {
  if (COLORS.includes(color)) e.classList.add('c-' + color);
  return e;
}

function notice(text) {
  const n = $('notice');
  n.textContent = text || '';
  n.hidden = !text;
}

function allowed(word) { return !!session && session.allow.includes(word); }

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-teamlead-csrf': session ? session.csrf : '' },
    body: JSON.stringify(body),
  });
  let data = {};
  try { data = await r.json(); } catch (e) { data = {}; }
  return { status: r.status, data };
}

function renderMembers() {
  const ul = $('members');
  ul.replaceChildren();
  for (const m of view.members) {
    const li = el('li');
    li.dataset.name = m.name;
    li.append(colored(el('div', 'name', '@' + m.name), m.color));
    const facts = [m.status, m.mode, m.host];
    if (m.task) facts.push('task ' + m.task);
    if (m.cost) facts.push(m.cost);
    if (m.over_budget) facts.push(m.over_budget);
    li.append(el('div', 'facts', facts.join(' · ')));
    ul.append(li);
  }
  const select = $('compose-to');
  const chosen = select.value;
  select.replaceChildren();
  for (const m of view.members) {
    const o = el('option', null, '@' + m.name);
    o.value = m.name;
    select.append(o);
  }
  if (chosen) select.value = chosen;
}

function itemNode(item) {
  const li = el('li', item.kind === 'system' ? 'system' : null);
  li.dataset.kind = item.kind;
  if (item.kind === 'user') li.append(el('span', 'who', '>'));
  if (item.kind === 'to') li.append(el('span', 'who', '→ @' + item.to));
  if (item.kind === 'lead') li.append(el('span', 'who', 'lead'));
  if (item.kind === 'ctl') li.append(el('span', 'who', 'ctl>'));
  if (item.kind === 'teammate' || item.kind === 'frame') li.append(colored(el('span', 'who', '@' + item.from), item.color));
  li.append(el('span', 'text', item.kind === 'teammate' && item.summary ? item.summary + '\n' + item.text : item.text));
  if (item.kind === 'to' && item.receipt !== null && item.receipt !== undefined) {
    const mark = el('span', 'mark', view.receipts[item.receipt] || 'sent');
    mark.dataset.receipt = item.receipt;
    li.append(mark);
  }
  return li;
}

function renderTranscript() {
  const ol = $('transcript');
  ol.replaceChildren(...view.transcript.map(itemNode));
}

function renderTasks() {
  const ul = $('tasks');
  ul.replaceChildren();
  for (const t of view.tasks) {
    ul.append(el('li', null, '#' + t.id + ' ' + t.subject + ' · ' + t.status + (t.owner ? ' · @' + t.owner : '')));
  }
}

function choiceButton(label, cls, onClick) {
  const b = el('button', cls, label);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

async function answer(card, body) {
  for (const b of card.querySelectorAll('button')) b.disabled = true;
  const { status, data } = await post(body.key !== undefined ? '/api/answer' : '/api/plan', body);
  if (status === 200) {
    card.dataset.answered = 'yes';
    card.querySelector('.error').textContent = 'Answered.';
    return;
  }
  const why = (data && data.error) ? data.error : 'refused (' + status + ')';
  if (status === 409) {
    // The page was stale: show the request as it is now (or drop it).
    if (body.key !== undefined) {
      view.requests.permissions = view.requests.permissions.filter((p) => p.key !== body.key);
      if (data.current) view.requests.permissions.push(data.current);
    } else {
      view.requests.plans = view.requests.plans.filter((p) => p.request_id !== body.request_id);
      if (data.current) view.requests.plans.push(data.current);
    }
    renderRequests();
    notice(why);
    return;
  }
  card.querySelector('.error').textContent = why;
  for (const b of card.querySelectorAll('button')) b.disabled = false;
}

function permissionCard(p) {
  const card = el('div', 'request');
  card.dataset.key = p.key;
  card.dataset.digest = p.digest;
  card.dataset.kind = 'permission';
  const title = el('div', 'title');
  title.append(colored(el('span', null, '@' + p.teammate), p.color), el('span', null, ' needs permission · ' + p.tool));
  card.append(title);
  for (const w of p.warnings) card.append(el('div', 'warn', w));
  if (p.description) card.append(el('div', 'dim', p.description));
  const pre = el('pre', 'input');
  for (const l of p.lines) pre.append(el('span', 'line-' + l.kind, l.text));
  card.append(pre);
  card.append(el('div', 'error'));
  const choices = el('div', 'choices');
  const step = steps[p.key];
  if (step && step.always !== undefined) {
    const c = p.choices.find((x) => x.id === step.always);
    if (c) {
      choices.append(el('div', 'title', 'Always? ' + c.label));
      if (c.meaning) choices.append(el('div', 'dim', 'allows ' + c.meaning));
      choices.append(choiceButton('Confirm: ' + c.label, 'yes confirm', () => { delete steps[p.key]; answer(card, { key: p.key, digest: p.digest, choice: c.id }); }));
      choices.append(choiceButton('Back', null, () => { delete steps[p.key]; renderRequests(); }));
    }
  } else if (step && step.no) {
    const reason = el('textarea', 'reason');
    reason.rows = 2;
    reason.placeholder = 'why, or what to do instead (optional)';
    reason.value = step.text || '';
    reason.addEventListener('input', () => { step.text = reason.value; });
    choices.append(reason);
    choices.append(choiceButton('Send no', 'no confirm', () => { delete steps[p.key]; answer(card, { key: p.key, digest: p.digest, choice: 'no', feedback: reason.value }); }));
    choices.append(choiceButton('Back', null, () => { delete steps[p.key]; renderRequests(); }));
  } else if (allowed('answer')) {
    for (const c of p.choices) {
      let cls = c.id === 'no' ? 'no' : 'yes';
      choices.append(choiceButton(c.label, cls + ' choice-' + c.id.replace(':', '-'), () => {
        if (c.id === 'once') answer(card, { key: p.key, digest: p.digest, choice: 'once' });
        else if (c.id === 'no') { steps[p.key] = { no: true }; renderRequests(); }
        else { steps[p.key] = { always: c.id }; renderRequests(); }
      }));
    }
  }
  card.append(choices);
  return card;
}

function planCard(p) {
  const card = el('div', 'request');
  card.dataset.requestId = p.request_id;
  card.dataset.kind = 'plan';
  const title = el('div', 'title');
  title.append(colored(el('span', null, '@' + p.teammate), p.color), el('span', null, ' asks to approve its plan'));
  card.append(title);
  for (const w of p.warnings) card.append(el('div', 'warn', w));
  card.append(el('pre', 'plan', p.plan));
  card.append(el('div', 'error'));
  const choices = el('div', 'choices');
  if (allowed('answer')) {
    for (const mode of p.modes) {
      choices.append(choiceButton('Approve (' + mode + ')', 'yes', () => answer(card, { request_id: p.request_id, digest: p.digest, choice: 'approve', mode })));
    }
    const reason = el('textarea', 'reason');
    reason.rows = 2;
    reason.placeholder = 'why it is rejected, what to change';
    choices.append(reason);
    choices.append(choiceButton('Reject', 'no', () => answer(card, { request_id: p.request_id, digest: p.digest, choice: 'reject', feedback: reason.value })));
  }
  card.append(choices);
  return card;
}

function renderRequests() {
  const box = $('requests');
  const cards = view.requests.permissions.map(permissionCard).concat(view.requests.plans.map(planCard));
  box.replaceChildren(...cards);
  $('waiting-count').textContent = String(cards.length);
  $('nothing-waits').hidden = cards.length > 0;
  for (const key of Object.keys(steps)) {
    if (!view.requests.permissions.some((p) => String(p.key) === key)) delete steps[key];
  }
}

function renderAll() {
  $('team').textContent = view.team ? 'teamlead · ' + view.team : 'teamlead';
  renderRequests();
  renderMembers();
  renderTranscript();
  renderTasks();
}

function apply(ev) {
  switch (ev.type) {
    case 'snapshot':
      view.team = ev.team; view.members = ev.members; view.requests = ev.requests; view.tasks = ev.tasks;
      view.transcript = ev.transcript; view.receipts = ev.receipts || {}; view.exited = ev.exited;
      renderAll();
      break;
    case 'team_name': view.team = ev.team; renderAll(); break;
    case 'members': view.members = ev.members; renderMembers(); break;
    case 'requests': view.requests = ev.requests; renderRequests(); break;
    case 'tasks': view.tasks = ev.tasks; renderTasks(); break;
    case 'transcript': {
      view.transcript.push(ev.item);
      const ol = $('transcript');
      ol.append(itemNode(ev.item));
      while (view.transcript.length > 300) { view.transcript.shift(); ol.firstChild && ol.firstChild.remove(); }
      break;
    }
    case 'receipt': {
      view.receipts[ev.id] = ev.state;
      for (const m of document.querySelectorAll('.mark')) if (m.dataset.receipt === String(ev.id)) m.textContent = ev.state;
      break;
    }
    case 'exited': view.exited = true; link('the team has ended', false); break;
    default: break;
  }
}

function link(text, live) {
  const l = $('link');
  l.textContent = text;
  l.classList.toggle('live', !!live);
}

function connect() {
  if (source) source.close();
  source = new EventSource('/api/events');
  source.onopen = () => { if (!view.exited) link('live', true); };
  source.onmessage = (m) => { try { apply(JSON.parse(m.data)); } catch (e) { notice('an update could not be read'); } };
  source.onerror = () => {
    if (view.exited) return;
    link('reconnecting…', false);
    // The browser comes back by itself (with the last event's number); a server that
    // restarted refuses the old session: ask again.
    if (source.readyState === EventSource.CLOSED) setTimeout(start, 2000);
  };
}

async function start() {
  let r;
  try { r = await fetch('/api/session', { credentials: 'same-origin' }); } catch (e) { link('offline', false); setTimeout(start, 3000); return; }
  if (r.status === 401) {
    link('not logged in', false);
    notice('Not logged in: open the login link that teamlead printed (teamlead web, or serve --web).');
    return;
  }
  session = await r.json();
  notice('');
  $('compose-section').hidden = !allowed('message') && !allowed('steer') && !allowed('interrupt');
  $('send-message').hidden = !allowed('message');
  $('send-steer').hidden = !allowed('steer');
  $('send-interrupt').hidden = !allowed('interrupt');
  connect();
}

async function compose(path, withText) {
  const to = $('compose-to').value;
  const text = $('compose-text').value;
  const { status, data } = await post(path, withText ? { to, text } : { to });
  if (status === 200) { if (withText) $('compose-text').value = ''; notice(''); }
  else notice((data && data.error) || ('refused (' + status + ')'));
}

document.addEventListener('DOMContentLoaded', () => {
  $('compose').addEventListener('submit', (e) => { e.preventDefault(); compose('/api/message', true); });
  $('send-steer').addEventListener('click', () => compose('/api/steer', true));
  $('send-interrupt').addEventListener('click', () => compose('/api/interrupt', false));
  start();
});

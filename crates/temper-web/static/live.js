// The run page, kept live: server-sent events from /runs/{id}/events update it in place.
// Every value goes in as text (textContent), never as markup; the one exception is the progress
// chart, fetched again from this server as the markup it renders for the page (every value in it
// escaped there), parsed inert and swapped in whole.
'use strict';
(function () {
  const root = document.getElementById('live');
  if (!root) return;
  const run = root.dataset.run;
  const byId = (id) => document.getElementById(id);
  const text = (id, value) => { const el = byId(id); if (el) el.textContent = value; };
  const dash = (v) => (v === null || v === undefined || v === '' ? '-' : String(v));
  const ruleLink = (ruleId, label) => {
    const a = document.createElement('a');
    a.href = '/runs/' + encodeURIComponent(run) + '/rules/' + encodeURIComponent(ruleId);
    a.textContent = label;
    return a;
  };

  const source = new EventSource(root.dataset.stream);
  source.onopen = () => { root.dataset.connected = 'yes'; text('conn', 'live'); };
  source.onerror = () => { text('conn', source.readyState === EventSource.CLOSED ? '' : 'reconnecting…'); };

  source.addEventListener('state', (m) => {
    const s = JSON.parse(m.data);
    const status = byId('status');
    status.textContent = s.status;
    status.className = 'badge s-' + s.status;
    text('phase', s.phase);
    const rule = byId('rule');
    rule.replaceChildren(s.rule ? ruleLink(s.rule, s.rule_short) : '-');
    text('elapsed', s.elapsed);
    text('eta', dash(s.eta));
    text('open', s.open_of);
    text('attempts', s.attempts);
    const pct = (v) => (typeof v === 'number' ? v.toFixed(2) + '%' : '-');
    text('score', pct(s.score_before) + ' → ' + pct(s.score_after));
    // Each count links to its status's rules, as the server wrote it.
    byId('counts').replaceChildren(...s.counts.map((c) => {
      const li = document.createElement('li');
      const a = document.createElement('a');
      const b = document.createElement('b');
      li.className = 's-' + c.status;
      a.href = '/runs/' + encodeURIComponent(run) + '?status=' + encodeURIComponent(c.status) + '#rules';
      if (root.dataset.filter === c.status) a.setAttribute('aria-current', 'true');
      b.textContent = c.n;
      a.append(c.status + ' ', b);
      li.append(a);
      return li;
    }));
    root.dataset.updates = String(Number(root.dataset.updates || 0) + 1);
    if (s.status === 'finished' || s.status === 'failed') { source.close(); text('conn', ''); }
  });

  // The kinds of event that move the chart: a verdict, a scan's score, a fix lost.
  const charted = new Set(['verdict', 'scan', 'reboot_blamed', 'regression_found']);
  const chart = byId('chart');
  let redraw = null;
  const refreshChart = () => {
    if (!chart || redraw) return;
    redraw = setTimeout(() => {
      redraw = null;
      fetch(chart.dataset.src, { credentials: 'same-origin' })
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error('chart: ' + r.status))))
        .then((html) => {
          const doc = new DOMParser().parseFromString(html, 'text/html');
          chart.replaceChildren(...[...doc.body.childNodes].map((n) => document.importNode(n, true)));
          chart.dataset.redraws = String(Number(chart.dataset.redraws || 0) + 1);
        })
        .catch(() => {});
    }, 500);
  };

  source.addEventListener('event', (m) => {
    const e = JSON.parse(m.data);
    if (charted.has(e.kind)) refreshChart();
    const tr = document.createElement('tr');
    for (const value of [e.id, e.ts, e.kind]) {
      const td = document.createElement('td');
      td.textContent = value;
      tr.append(td);
    }
    tr.children[1].className = 'nowrap';
    const rule = document.createElement('td');
    if (e.rule_id) rule.append(ruleLink(e.rule_id, e.rule_short));
    const data = document.createElement('td');
    data.className = 'data';
    data.textContent = e.data;
    tr.append(rule, data);
    byId('events').prepend(tr);
  });
})();

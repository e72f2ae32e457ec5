// A plan run's page and a rule page in Debian's Chromium (puppeteer-core from
// tests/report/node_modules), for crates/temper-web/tests/browser_plan.rs.
//
//   node tests/web/plan.js BASE_URL RUN OUT_DIR
//
// It opens the run page (screenshot web-plan.png), follows step 2's rule link to its rule page,
// and prints one line of JSON: what each page showed, for the test to judge.
'use strict';
const path = require('path');
const { launch, watch } = require('./chromium');

// The plan section and the rule page's plan line, and whether anything hostile ran.
function shown() {
  const plan = document.getElementById('plan');
  return {
    url: location.pathname,
    rows: [...document.querySelectorAll('#plan tr.plan-step')].map((tr) => ({
      step: Number(tr.dataset.step),
      outcome: tr.dataset.outcome,
      badge: tr.querySelector('.badge').textContent,
      text: tr.cells[3].textContent,
      visible: tr.getBoundingClientRect().height > 0,
    })),
    heading: (document.querySelector('#plan h2') || {}).textContent || null,
    counts: (document.getElementById('plan-counts') || {}).textContent || null,
    rule_plan: plan && plan.localName === 'dd' ? { outcome: plan.dataset.outcome, text: plan.textContent } : null,
    pwned: typeof window.__pwned,
    imgs: document.querySelectorAll('img').length,
    onerror: document.querySelectorAll('[onerror]').length,
    inline_scripts: [...document.scripts].filter((s) => !s.src).length,
    csp_violations: window.__csp || [],
  };
}

async function main() {
  const [base, run, out] = process.argv.slice(2);
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.evaluateOnNewDocument(watch);
    await page.setViewport({ width: 1280, height: 1000 });

    await page.goto(`${base}/runs/${run}`, { waitUntil: 'load' });
    const runPage = await page.evaluate(shown);
    const section = await page.$('#plan');
    await section.screenshot({ path: path.join(out, 'web-plan.png') });

    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#plan tr[data-step="2"] a')]);
    const rulePage = await page.evaluate(shown);

    console.log(JSON.stringify({ run: runPage, rule: rulePage, errors }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});

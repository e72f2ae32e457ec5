// Drives Debian's Chromium (puppeteer-core from tests/report/node_modules) over the pages of
// `temper serve`, for crates/temper-web/tests/browser.rs.
//
//   node tests/web/live.js BASE_URL RUN RULE SCREENSHOT
//
// It opens the run page, prints `loaded` once the page's event stream is connected, waits for
// the test to move the run on (phase `regression`, a `regression_check` event), then opens the
// rule page, keeps screenshots (the rule's, and web-run.png beside it), and prints one line of
// JSON: what it found, for the test to judge.
'use strict';
const path = require('path');
const { launch, watch } = require('./chromium');

// What a page shows of the hostile text, and whether any of it ran.
function exposure() {
  const text = document.body.innerText;
  return {
    pwned: typeof window.__pwned,
    imgs: document.querySelectorAll('img').length,
    img_onerror: document.querySelectorAll('img[onerror], [onerror]').length,
    inline_scripts: [...document.scripts].filter((s) => !s.src).length,
    csp_violations: window.__csp,
    shows_script: text.includes('<script>window.__pwned=1</script>'),
    shows_img: text.includes('<img src=x onerror="window.__pwned=1">'),
  };
}

async function main() {
  const [base, run, rule, screenshot] = process.argv.slice(2);
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.evaluateOnNewDocument(watch);

    await page.goto(`${base}/runs/${run}`, { waitUntil: 'load' });
    await page.evaluate(() => { window.__marker = 'same page'; });
    await page.waitForSelector('#live[data-connected="yes"]', { timeout: 15000 });
    const before = await page.$eval('#phase', (el) => el.textContent);
    const chartTitle = () => (document.querySelector('#chart svg > title') || {}).textContent || '';
    const chartBefore = await page.evaluate(chartTitle);
    console.log('loaded');

    await page.waitForFunction(
      () => document.getElementById('phase').textContent === 'regression'
        && [...document.querySelectorAll('#events td')].some((td) => td.textContent === 'regression_check'),
      { timeout: 20000 },
    );
    await page.waitForSelector('#chart[data-redraws]', { timeout: 20000 });
    const live = await page.evaluate(() => ({
      chart: (document.querySelector('#chart svg > title') || {}).textContent || '',
      chart_redraws: Number(document.getElementById('chart').dataset.redraws || 0),
      marker: window.__marker,
      navigations: performance.getEntriesByType('navigation').length,
      phase: document.getElementById('phase').textContent,
      rule: document.getElementById('rule').textContent,
      status: document.getElementById('status').textContent,
      updates: Number(document.getElementById('live').dataset.updates || 0),
      first_event: document.querySelector('#events tr td:nth-child(3)').textContent,
    }));
    const runPage = await page.evaluate(exposure);
    await page.setViewport({ width: 1280, height: 1000 });
    await page.screenshot({ path: path.join(path.dirname(screenshot), 'web-run.png'), fullPage: true });

    await page.goto(`${base}/runs/${run}/rules/${encodeURIComponent(rule)}`, { waitUntil: 'load' });
    const rulePage = await page.evaluate(exposure);
    rulePage.title = await page.$eval('p.title', (el) => el.textContent);
    await page.screenshot({ path: screenshot, fullPage: true });

    console.log(JSON.stringify({ before, chart_before: chartBefore, live, run_page: runPage, rule_page: rulePage, errors }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});

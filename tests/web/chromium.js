// What tests/web's drivers share: Debian's Chromium through puppeteer-core (from
// tests/report/node_modules), and the watcher each page gets before its own scripts run.
'use strict';
const path = require('path');
const { createRequire } = require('module');

const puppeteer = createRequire(path.join(__dirname, '../report/package.json'))('puppeteer-core');

// Headless Chromium ($CHROMIUM, else /usr/bin/chromium).
function launch() {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  });
}

// Collected in every page before its own scripts run: CSP violations.
function watch() {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
}

module.exports = { launch, watch };

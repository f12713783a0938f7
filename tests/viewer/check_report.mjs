// Loads an iotap HTML report in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core) and checks what a user would: no console error,
// no request to anything, the charts drawn (elements present, pixels not
// blank, screenshot not blank), zoom and pan of the timeline, sorting of the
// tables; with --python, the Python profile's tables and its icicle (drawn,
// widths adding up, zoom on a click); with --hostile, that the hostile file names are shown as text and
// run nothing. Exits 0 if every check passed, 1 with the failures listed.
//
//   node tests/viewer/check_report.mjs REPORT.html [--hostile] [--steps] [--python]
//        [--bucketed] [--screenshot FILE] [--timing-runs N] [--budget-ms MS]
//
// --timing-runs N loads the page N more times and prints the median time from
// navigation to charts drawn (the benchmark's figure); --budget-ms fails the
// check when that median is higher.

import {existsSync} from 'node:fs';
import {resolve} from 'node:path';
import {pathToFileURL} from 'node:url';

import {checkHostile, checkIcicle, checkSorting, checkZoom, pixelsOf, screenshotVariety} from './checks.mjs';

const CHROMIUM = process.env.IOTAP_CHROMIUM || '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
               '--disable-component-update', '--disable-sync', '--no-first-run'];

function parseArgs(argv) {
  const options = {report: null, hostile: false, steps: false, bucketed: false, screenshot: null,
                   timingRuns: 0, budgetMs: 0};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--hostile') options.hostile = true;
    else if (a === '--steps') options.steps = true;
    else if (a === '--python') options.python = true;
    else if (a === '--bucketed') options.bucketed = true;
    else if (a === '--screenshot') options.screenshot = argv[++i];
    else if (a === '--timing-runs') options.timingRuns = Number(argv[++i]);
    else if (a === '--budget-ms') options.budgetMs = Number(argv[++i]);
    else if (!options.report) options.report = a;
    else throw new Error('unexpected argument ' + a);
  }
  if (!options.report) throw new Error('usage: check_report.mjs REPORT.html [options]');
  return options;
}

async function loadPlaywright() {
  try {
    return await import('playwright-core');
  } catch (error) {
    throw new Error('playwright-core is not installed: run `npm ci` in tests/viewer ' +
                    '(tests/run-all.sh does) (' + error.message + ')');
  }
}

// Opens the report in a fresh page and records everything that must not happen.
async function openReport(browser, url) {
  const page = await browser.newPage({viewport: {width: 1280, height: 900}});
  const problems = {console: [], requests: [], dialogs: [], pageErrors: []};
  page.on('console', (m) => {
    // The checks' own getImageData calls draw Chromium's readback hint; it says nothing of the page.
    if (m.type() === 'warning' && m.text().includes('willReadFrequently')) return;
    if (m.type() === 'error' || m.type() === 'warning') problems.console.push(m.type() + ': ' + m.text());
  });
  page.on('pageerror', (e) => problems.pageErrors.push(String(e)));
  page.on('dialog', async (d) => {
    problems.dialogs.push(d.type() + ': ' + d.message());
    await d.dismiss();
  });
  page.on('request', (r) => {
    if (r.url() !== url && !r.url().startsWith('data:')) problems.requests.push(r.url());
  });
  const started = Date.now();
  await page.goto(url, {waitUntil: 'load'});
  await page.waitForFunction(() => document.documentElement.dataset.rendered, null, {timeout: 30000});
  const wallMs = Date.now() - started;
  const renderMs = Number(await page.evaluate(() => document.documentElement.dataset.renderMs));
  const sectionMs = JSON.parse(await page.evaluate(() => document.documentElement.dataset.sectionMs || '{}'));
  return {page, problems, wallMs, renderMs, sectionMs};
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  if (!existsSync(CHROMIUM)) {
    throw new Error('Chromium not found at ' + CHROMIUM + ': install it with ' +
                    '`.ci/install-deps --with-browser` (Debian package chromium), or set IOTAP_CHROMIUM');
  }
  if (!existsSync(options.report)) throw new Error('no report at ' + options.report);
  const {chromium} = await loadPlaywright();
  const browser = await chromium.launch({executablePath: CHROMIUM, headless: true, args: FLAGS});
  try {
    const url = pathToFileURL(resolve(options.report)).href;
    const {page, problems, renderMs, sectionMs} = await openReport(browser, url);
    check(await page.evaluate(() => document.documentElement.dataset.rendered) === 'true',
          'the page did not finish drawing');
    check(await page.locator('#facts .fact').count() >= 8, 'the run at a glance has fewer than 8 facts');
    check(await page.locator('#findings .finding, #findings p').count() >= 1, 'no findings section');
    const timeline = await pixelsOf(page, '#timeline-canvas');
    check(timeline.inked > 2000 && timeline.colours > 3,
          'the timeline looks blank (' + JSON.stringify(timeline) + ')');
    check(await page.locator('svg.histogram rect.bar').count() > 0, 'no histogram bars');
    check(await page.locator('#patterns rect').count() > 0, 'no access-pattern bars');
    check(await page.locator('#files-table tbody tr').count() > 0, 'the files table is empty');
    check(await page.locator('#processes-table tbody tr').count() > 0, 'the process table is empty');
    if (options.steps) {
      const overlap = await pixelsOf(page, '#overlap-canvas');
      check(overlap.inked > 500 && overlap.colours > 3, 'the per-step chart looks blank');
      check(Number(await page.locator('#overlap').getAttribute('data-bars')) > 0, 'no per-step bars');
      const exact = await page.evaluate(() => JSON.parse(
          document.getElementById('iotap-report').textContent).timeline.spans !== undefined);
      check(options.bucketed !== exact, options.bucketed ? 'expected step buckets, found spans'
                                                         : 'expected exact step spans');
    }
    failures.push(...await checkZoom(page));
    failures.push(...await checkSorting(page));
    if (options.hostile) failures.push(...await checkHostile(page));
    if (options.python) failures.push(...await checkIcicle(page));
    const shot = await page.screenshot({fullPage: true, path: options.screenshot || undefined});
    const variety = await screenshotVariety(browser, shot);
    check(variety.colours > 50 && variety.inked > 0.02,
          'the screenshot looks blank (' + JSON.stringify(variety) + ')');
    const times = [renderMs];
    for (let i = 0; i < options.timingRuns; i++) {
      const again = await openReport(browser, url);
      times.push(again.renderMs);
      for (const key of Object.keys(problems)) problems[key].push(...again.problems[key]);
      await again.page.close();
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    for (const [key, list] of Object.entries(problems)) {
      check(list.length === 0, key + ': ' + list.slice(0, 5).join(' | '));
    }
    if (options.budgetMs > 0) {
      check(median < options.budgetMs, 'render took ' + median + ' ms, budget ' + options.budgetMs + ' ms');
    }
    console.log(JSON.stringify({report: options.report, render_ms_median: median, render_ms: times,
                                section_ms: sectionMs, timeline_pixels: timeline.inked, failures}));
  } finally {
    await browser.close();
  }
  if (failures.length > 0) {
    for (const f of failures) console.error('FAIL: ' + f);
    process.exit(1);
  }
}

main().catch((error) => {
  console.error('FAIL: ' + (error && error.message ? error.message : error));
  process.exit(1);
});

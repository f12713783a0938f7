// The checks check_report.mjs runs on a loaded report page. Each returns a
// list of failures (empty when all is well) or, for the pixel helpers, what
// it measured.

// Pixels of a canvas: how many are not white, how many colours (rounded to 4
// bits a channel), and a hash to tell two drawings apart.
export async function pixelsOf(page, selector) {
  return page.evaluate((sel) => {
    const canvas = document.querySelector(sel);
    if (!canvas) return {inked: 0, colours: 0, hash: 0, missing: true};
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let inked = 0;
    let hash = 0;
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] < 245 || data[i + 1] < 245 || data[i + 2] < 245) inked++;
      colours.add((data[i] >> 4) << 8 | (data[i + 1] >> 4) << 4 | data[i + 2] >> 4);
      hash = (hash * 31 + data[i] + 7 * data[i + 1] + 13 * data[i + 2]) >>> 0;
    }
    return {inked, colours: colours.size, hash};
  }, selector);
}

// The same measures over a PNG screenshot, drawn in a blank page of its own.
export async function screenshotVariety(browser, png) {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async (base64) => {
      const image = new Image();
      image.src = 'data:image/png;base64,' + base64;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const ctx = canvas.getContext('2d');
      ctx.drawImage(image, 0, 0);
      const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let inked = 0;
      const colours = new Set();
      for (let i = 0; i < data.length; i += 4) {
        if (data[i] < 245 || data[i + 1] < 245 || data[i + 2] < 245) inked++;
        colours.add((data[i] >> 4) << 8 | (data[i + 1] >> 4) << 4 | data[i + 2] >> 4);
      }
      return {width: image.width, height: image.height, colours: colours.size,
              inked: inked / (data.length / 4)};
    }, png.toString('base64'));
  } finally {
    await page.close();
  }
}

async function view(page) {
  const section = page.locator('#timeline');
  return {start: Number(await section.getAttribute('data-view-start')),
          end: Number(await section.getAttribute('data-view-end'))};
}

// Zoom (button, wheel), pan (drag), reset (key) of the timeline.
export async function checkZoom(page) {
  const failures = [];
  const full = await view(page);
  const before = await pixelsOf(page, '#timeline-canvas');
  await page.getByRole('button', {name: 'Zoom in', exact: true}).click();
  const zoomed = await view(page);
  const ratio = (zoomed.end - zoomed.start) / (full.end - full.start);
  if (Math.abs(ratio - 0.5) > 0.01) failures.push('Zoom in showed ' + ratio + ' of the window, not half');
  const after = await pixelsOf(page, '#timeline-canvas');
  if (after.hash === before.hash) failures.push('the timeline did not change when zoomed');

  const box = await page.locator('#timeline-canvas').boundingBox();
  await page.mouse.move(box.x + box.width * 0.3, box.y + 40);
  await page.mouse.wheel(0, -400);
  await page.waitForTimeout(50);
  const wheeled = await view(page);
  if (!(wheeled.end - wheeled.start < (zoomed.end - zoomed.start) * 0.9)) {
    failures.push('the wheel did not zoom in (' + JSON.stringify(wheeled) + ')');
  }
  await page.mouse.move(box.x + box.width / 2, box.y + 40);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 - 150, box.y + 40, {steps: 5});
  await page.mouse.up();
  const panned = await view(page);
  const span = wheeled.end - wheeled.start;
  if (!(panned.start > wheeled.start) || Math.abs((panned.end - panned.start) - span) > span * 1e-6) {
    failures.push('dragging did not pan (' + JSON.stringify({wheeled, panned}) + ')');
  }
  await page.locator('#timeline-canvas').focus();
  await page.keyboard.press('0');
  const reset = await view(page);
  if (Math.abs(reset.start - full.start) > 1e-9 || Math.abs(reset.end - full.end) > 1e-9) {
    failures.push('the 0 key did not show the whole run again');
  }
  return failures;
}

function ordered(values, descending) {
  for (let i = 1; i < values.length; i++) {
    const a = values[i - 1];
    const b = values[i];
    const order = typeof a === 'number' ? a - b : a.localeCompare(b);
    if (descending ? order < 0 : order > 0) return false;
  }
  return true;
}

// Column values of the table's body rows (or of each group's rows).
async function columnValues(page, table, column, numeric, rowSelector) {
  return page.$$eval(`${table} ${rowSelector}`, (rows, [col, num]) => rows.map((tr) => {
    const v = tr.children[col].getAttribute('data-value');
    return num ? Number(v) : v;
  }), [column, numeric]);
}

export async function checkSorting(page) {
  const failures = [];
  const header = async (table, label) => {
    const cells = page.locator(`${table} thead th`);
    const labels = await cells.allTextContents();
    const index = labels.indexOf(label);
    return {index, cell: cells.nth(index)};
  };
  const files = await header('#files-table', 'read');
  await files.cell.click();
  if (await files.cell.getAttribute('aria-sort') !== 'descending') failures.push('files: no descending mark');
  let values = await columnValues(page, '#files-table', files.index, true, 'tbody tr');
  if (!ordered(values, true)) failures.push('files not sorted by bytes read, descending: ' + values);
  await files.cell.click();
  values = await columnValues(page, '#files-table', files.index, true, 'tbody tr');
  if (!ordered(values, false)) failures.push('files not sorted by bytes read, ascending');
  const path = await header('#files-table', 'file');
  await path.cell.click();
  const paths = await columnValues(page, '#files-table', path.index, false, 'tbody tr');
  if (!ordered(paths, false)) failures.push('files not sorted by name');

  const processes = await header('#processes-table', 'read');
  await processes.cell.click();
  const heads = await columnValues(page, '#processes-table', processes.index, true, 'tbody tr:first-child');
  if (!ordered(heads, true)) failures.push('process groups not sorted by bytes read: ' + heads);
  const groups = await page.$$eval('#processes-table tbody', (bodies, col) => bodies.map(
      (b) => Array.from(b.querySelectorAll('tr.member')).map((tr) => Number(tr.children[col].getAttribute('data-value')))),
      processes.index);
  if (!groups.every((g) => ordered(g, true))) failures.push('loaders not sorted within their trainer');
  return failures;
}

// Hostile names appear as text, escaped where they hold control characters,
// and add no element, attribute or script.
export async function checkHostile(page) {
  const failures = [];
  const found = await page.evaluate(() => {
    const attributes = [];
    for (const e of document.querySelectorAll('*')) {
      for (const a of e.attributes) {
        if (/^on/i.test(a.name) || /^(src|href)$/i.test(a.name)) attributes.push(e.tagName + ' ' + a.name);
      }
    }
    return {
      images: document.querySelectorAll('img').length,
      scripts: document.querySelectorAll('script').length,
      attributes,
      files: document.getElementById('files-table').textContent,
      tfrecords: (document.getElementById('tfrecord-table') || {textContent: ''}).textContent,
      command: document.getElementById('command').textContent,
    };
  });
  if (found.images !== 0) failures.push(found.images + ' img elements in the page');
  if (found.scripts !== 2) failures.push(found.scripts + ' script elements, not 2');
  const unexpected = found.attributes.filter((a) => a !== 'LINK href');
  if (unexpected.length) failures.push('attributes that load or run something: ' + unexpected.join(', '));
  for (const text of ['/data/<img src=x onerror=alert(1)>.png', '/data/</script><script>alert(2)</script>.bin',
                      '/data/quote"and\'apostrophe&amp;.bin', '/data/new\\nline\\tand\\rreturn.bin',
                      '/data/bad-\\xff\\xfe-utf8.bin', '/data/line\\u2028sep\\u2029.bin',
                      '/data/h5 <i>x</i>.h5']) {
    if (!found.files.includes(text)) failures.push('the files table does not show ' + JSON.stringify(text));
  }
  if (!found.tfrecords.includes('/data/<svg onload=alert(6)>.tfrecord')) {
    failures.push('the TFRecord table does not show the shard\'s name as text');
  }
  for (const text of ['--tag=</script><img src=x onerror=alert(3)>', '--name="q\'\\n\\xff']) {
    if (!found.command.includes(text)) failures.push('the command does not show ' + JSON.stringify(text));
  }
  return failures;
}

// The Python profile (a run with stack samples): its cost table has rows,
// the icicle has frames whose children never outgrow their parent's share,
// and a click on a frame zooms into it (the top bar then is that frame) and
// a click on the top bar zooms out again.
export async function checkIcicle(page) {
  const failures = [];
  if (await page.locator('#py-costs-0 tbody tr').count() === 0) failures.push('no Python cost rows');
  const icicle = page.locator('#py-flame-0');
  if (await icicle.count() === 0) return failures.concat(['no icicle of preparation time']);
  const frames = Number(await icicle.getAttribute('data-frames'));
  if (!(frames > 3)) failures.push('the icicle has ' + frames + ' frames');
  const root = await icicle.locator('g.frame').first().getAttribute('data-share');
  if (Math.abs(Number(root) - 1) > 1e-3) failures.push('the icicle root has share ' + root);
  // Zoom into the widest frame two levels down, then back out.
  const target = await page.evaluate(() => {
    const rows = [...document.querySelectorAll('#py-flame-0 g.frame')]
        .map((g) => ({name: g.dataset.name, y: Number(g.querySelector('rect').getAttribute('y')),
                      w: Number(g.querySelector('rect').getAttribute('width'))}));
    const level = rows.filter((r) => r.y === 36).sort((a, b) => b.w - a.w);
    return level.length ? level[0].name : null;
  });
  if (target === null) return failures.concat(['the icicle has no third row']);
  await icicle.locator('g.frame[data-name="' + target.replace(/"/g, '\\"') + '"]').first().click();
  if (await icicle.getAttribute('data-focus') !== target) failures.push('a click did not zoom to ' + target);
  const width = await icicle.locator('g.frame rect').first().getAttribute('width');
  if (!(Number(width) > 990)) failures.push('the zoomed frame is ' + width + ' wide, not the whole width');
  await icicle.locator('g.frame').first().click();
  if (await icicle.getAttribute('data-focus') === target) failures.push('a click on the top bar did not zoom out');
  return failures;
}

// The mapped-read run (make_sample_runs, WriteMappedRun): mapped reads and
// io_uring as layers of their own, counted in their units, with the exact
// figures of the run: 10 page faults of 256 KiB spans (perf samples, 2
// lost); 10 io_uring_enter calls and 20 read requests of 64 KiB, a read
// never completed and 3 requests unseen; 3.75 MiB read in all. The sections
// of each say what their figures cannot show.
export async function checkMapped(page) {
  const failures = [];
  const rowsOf = (selector) => page.$$eval(selector + ' tbody tr', (trs) => trs.map(
      (tr) => Array.from(tr.children).map((td) => td.textContent)));
  const rows = await rowsOf('#layers-table');
  const row = (label) => rows.find((r) => r[0] === label) || [];
  const expect = (what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      failures.push(what + ': ' + JSON.stringify(got) + ', expected ' + JSON.stringify(want));
    }
  };
  // layer, count, reads, read, writes, written, time, busy: 10 faults of
  // 2 ms; 10 calls of 1.5 ms with their requests (0.7 and 1.4 ms) inside.
  expect('the mapped reads row', row('Mapped reads'),
         ['Mapped reads', '10 faults', '10', '2.50 MiB', '0', '0 B', '20.0 ms', '20.0 ms']);
  expect('the io_uring row', row('io_uring'),
         ['io_uring', '21 requests', '21', '1.25 MiB', '0', '0 B', '36.0 ms', '15.0 ms']);
  const text = async (selector) => (await page.locator(selector).textContent()) || '';
  expect('the mapped reads summary', await text('#mapped-summary'),
         'Page faults in file mappings, seen by perf samples in 1 process. 10 faults, 10 major ' +
         '(20.0 ms waiting for storage), mapped 2.50 MiB, of which the program touched at least ' +
         '40.0 KiB.');
  expect('the mapped files', await rowsOf('#mapped-table'),
         [['/data/train.arrow', '10', '10', '20.0 ms', '2.50 MiB', '40.0 KiB']]);
  expect('the io_uring summary', await text('#uring-summary'),
         '21 requests in 10 calls into the kernel: 21 reads (1.25 MiB, 21.0 ms submit to ' +
         'completion), 0 writes (0 B), 0 other, 0 failed, 1 without a completion seen.');
  expect('the io_uring files', await rowsOf('#uring-table'),
         [['/data/val.bin', '21', '1.25 MiB', '0', '0 B', '0', '1']]);
  const caveats = await page.locator('ul.caveats li').allTextContents();
  for (const words of ['re-reads of pages already mapped', '2 page faults were lost',
                       '1 of 21 requests had no completion the tracer saw',
                       '3 requests were submitted by system calls the tracer cannot see']) {
    if (!caveats.some((c) => c.startsWith(words))) failures.push('no caveat says ' + words + ': ' + caveats);
  }
  const titles = await page.locator('.histogram-card h3').allTextContents();
  for (const title of ['Mapped reads: 10 page faults', 'io_uring: 21 read requests']) {
    if (!titles.includes(title)) failures.push('no histogram titled ' + title + ': ' + titles);
  }
  const read = await page.locator('#facts .fact', {hasText: 'Data read'}).locator('dd').textContent();
  if (!read.startsWith('3.75 MiB')) failures.push('data read: ' + read + ', expected 3.75 MiB');
  const series = await page.evaluate(() => JSON.parse(
      document.getElementById('iotap-report').textContent).timeline.series.map((s) => s.name));
  for (const name of ['read MAPPED', 'read URING']) {
    if (!series.includes(name)) failures.push('no timeline series ' + name + ': ' + series);
  }
  return failures;
}

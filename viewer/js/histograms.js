// Transfer-size histograms per layer (power-of-two buckets, counts on a log
// scale) and access patterns, as SVG.

const HIST_WIDTH = 440;
const HIST_HEIGHT = 170;
const HIST_MARGIN = {left: 40, right: 8, top: 8, bottom: 34};
const PATTERN_KINDS = [
  ['consecutive', '#16a34a', 'consecutive (starts where the last read ended)'],
  ['sequential', '#65a30d', 'sequential (forward, with a gap)'],
  ['strided', '#d97706', 'strided (the same gap again)'],
  ['random', '#dc2626', 'random (anything else, backwards too)'],
];

function renderSizes(report, section) {
  const sources = [];
  const dataFiles = report.data_files || {};
  if (num(dataFiles.reads) > 0) {
    sources.push({name: 'Data files', sizes: dataFiles.read_sizes,
                  pattern: dataFiles.read_pattern, reads: dataFiles.reads});
  }
  for (const layer of list(report.layers)) {
    if (num(layer.reads) <= 0) continue;
    sources.push({name: layerLabel(layer.name), sizes: layer.read_sizes,
                  pattern: layer.read_pattern, reads: layer.reads, unit: layerReadUnit(layer.name)});
  }
  if (sources.length === 0) {
    section.appendChild(el('p', {class: 'muted'}, 'No reads were recorded.'));
    return 0;
  }
  section.appendChild(el('p', {class: 'hint'},
      'Read sizes in power-of-two buckets: a bar at 4 KiB counts reads of 4 KiB up to 8 KiB. ' +
      'Heights are on a log scale, so rare sizes stay visible; hover a bar for its count. ' +
      'A page fault\u2019s size is the span of pages it mapped.'));
  const grid = el('div', {class: 'histograms'});
  let drawn = 0;
  for (const source of sources) {
    const chart = histogram(list((source.sizes || {}).log2).map(num));
    if (chart) drawn++;
    grid.appendChild(el('div', {class: 'histogram-card'},
        el('h3', null, source.name + ': ' + fmtCount(source.reads) + ' ' + (source.unit || 'reads')),
        chart || el('p', {class: 'muted'}, 'no sizes recorded')));
  }
  section.appendChild(grid);
  section.appendChild(el('h3', null, 'Access patterns'));
  section.appendChild(el('p', {class: 'hint'},
      'How each read relates to the previous read of the same file by the same thread.'));
  section.appendChild(patterns(sources));
  section.appendChild(legend(PATTERN_KINDS.map(([, colour, label]) => [colour, label])));
  return drawn;
}

function histogram(counts) {
  let first = counts.findIndex((c) => c > 0);
  if (first < 0) return null;
  let last = counts.length - 1;
  while (counts[last] <= 0) last--;
  first = Math.max(0, Math.min(first, last - 7));
  last = Math.max(last, first + 7);
  const n = last - first + 1;
  const peak = Math.max(...counts);
  const plotW = HIST_WIDTH - HIST_MARGIN.left - HIST_MARGIN.right;
  const plotH = HIST_HEIGHT - HIST_MARGIN.top - HIST_MARGIN.bottom;
  const logMax = Math.log10(peak + 1);
  const yOf = (count) => HIST_MARGIN.top + plotH - (Math.log10(count + 1) / logMax) * plotH;
  const root = svg('svg', {class: 'histogram', viewBox: '0 0 ' + HIST_WIDTH + ' ' + HIST_HEIGHT,
                           role: 'img', 'aria-label': 'read sizes'});
  for (let p = 1; p <= peak * 1.0001; p *= 10) {
    const y = yOf(p);
    root.appendChild(svg('line', {class: 'axis', x1: HIST_MARGIN.left, x2: HIST_WIDTH - HIST_MARGIN.right,
                                  y1: y, y2: y}));
    root.appendChild(svg('text', {x: HIST_MARGIN.left - 4, y: y + 3, 'text-anchor': 'end'},
                         p >= 1e6 ? p.toExponential(0) : fmtCount(p)));
  }
  const barW = plotW / n;
  const labelEvery = Math.max(1, Math.ceil(n / 8));
  for (let i = 0; i < n; i++) {
    const k = first + i;
    const count = counts[k] || 0;
    const x = HIST_MARGIN.left + i * barW;
    if (count > 0) {
      const y = yOf(count);
      root.appendChild(svg('rect', {class: 'bar', x: x + 1, y, width: Math.max(1, barW - 2),
                                    height: HIST_MARGIN.top + plotH - y, 'data-bucket': k,
                                    'data-count': count},
                           svg('title', {text: log2Label(k) + ' to ' + log2Label(k + 1) + ': ' +
                                               fmtCount(count) + ' reads'})));
    }
    if (i % labelEvery === 0) {
      root.appendChild(svg('text', {x: x + barW / 2, y: HIST_HEIGHT - HIST_MARGIN.bottom + 14,
                                    'text-anchor': 'middle'}, log2Label(k)));
    }
  }
  root.appendChild(svg('text', {x: HIST_MARGIN.left + plotW / 2, y: HIST_HEIGHT - 4, 'text-anchor': 'middle'},
                       'read size (bytes returned)'));
  return root;
}

function patterns(sources) {
  const rowH = 22;
  const labelW = 200;
  const width = 900;
  const root = svg('svg', {class: 'patterns', id: 'patterns',
                           viewBox: '0 0 ' + width + ' ' + (sources.length * rowH + 4),
                           role: 'img', 'aria-label': 'access patterns'});
  sources.forEach((source, row) => {
    const p = source.pattern || {};
    const total = PATTERN_KINDS.reduce((sum, [kind]) => sum + num(p[kind]), 0);
    const y = row * rowH + 2;
    root.appendChild(svg('text', {x: 0, y: y + 14}, source.name.slice(0, 34)));
    if (total <= 0) {
      root.appendChild(svg('text', {x: labelW, y: y + 14}, 'no read followed another on the same file'));
      return;
    }
    let x = labelW;
    for (const [kind, colour] of PATTERN_KINDS) {
      const w = num(p[kind]) / total * (width - labelW);
      if (w <= 0) continue;
      root.appendChild(svg('rect', {x, y, width: w, height: rowH - 6, fill: colour, 'data-kind': kind},
                           svg('title', {text: kind + ': ' + fmtCount(p[kind]) + ' reads (' +
                                               fmtPercent(num(p[kind]) / total) + ')'})));
      if (w > 60) {
        root.appendChild(svg('text', {x: x + 4, y: y + 12, class: 'on-bar'},
                             kind + ' ' + fmtPercent(num(p[kind]) / total)));
      }
      x += w;
    }
  });
  return root;
}

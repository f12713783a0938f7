// I/O and compute per step: one stacked bar per step (or per bucket of
// consecutive steps, for runs with very many), for one trainer at a time.
// A step is its data wait plus compute; the I/O of the trainer and its
// loaders during the wait is exposed, during compute it is hidden.

const OVERLAP_HEIGHT = 220;
const OVERLAP_PARTS = [
  ['exposed', '#b42318', 'exposed I/O (I/O while waiting)'],
  ['waitRest', '#fda29b', 'waiting, no I/O (preparation, queues)'],
  ['hidden', '#2563eb', 'hidden I/O (I/O during compute)'],
  ['compute', '#d0d5dd', 'compute without I/O'],
];

// Per-step parts, in seconds per step, of a step or a bucket.
function stepParts(item) {
  const steps = Math.max(1, num(item.steps) || 1);
  const duration = num(item.duration_s) / steps;
  const waitKnown = num(item.data_wait_s) >= 0;
  const wait = waitKnown ? Math.min(duration, num(item.data_wait_s) / steps) : 0;
  const exposed = Math.min(wait, num(item.exposed_io_s) / steps);
  const compute = duration - wait;
  const hidden = Math.min(compute, num(item.hidden_io_s) / steps);
  return {
    exposed, waitRest: wait - exposed, hidden, compute: compute - hidden, total: duration, waitKnown,
  };
}

function trainerKey(item) {
  const rank = item.rank === undefined ? 0 : num(item.rank);
  return 'trainer ' + num(item.pid) + (rank >= 0 ? ', rank ' + rank : '');
}

function overlapItems(report) {
  const steps = list(report.steps);
  const bucketed = steps.length === 0 && list(report.step_buckets).length > 0;
  const items = bucketed ? list(report.step_buckets) : steps;
  // Keyed by pid and rank: trainers on different hosts may share a pid.
  const byTrainer = new Map();
  for (const item of items) {
    const key = trainerKey(item);
    if (!byTrainer.has(key)) byTrainer.set(key, []);
    byTrainer.get(key).push(item);
  }
  for (const group of byTrainer.values()) group.sort((a, b) => num(a.start_s) - num(b.start_s));
  return {byTrainer, bucketed};
}

function renderOverlap(report, section) {
  const overlap = report.overlap || {};
  const {byTrainer, bucketed} = overlapItems(report);
  section.appendChild(el('p', null,
      'Over all steps: compute ' + fmtDuration(overlap.compute_s) + ', waiting for data ' +
      fmtDuration(overlap.wait_s) + '. I/O hidden behind compute ' + fmtDuration(overlap.hidden_io_s) +
      ', exposed while waiting ' + fmtDuration(overlap.exposed_io_s) + ', outside steps ' +
      fmtDuration(overlap.outside_steps_io_s) + '.'));
  if (byTrainer.size === 0) {
    section.appendChild(el('p', {class: 'muted'},
        'No steps recorded: trace with `iotap run --torch-steps`, mark steps with the iotap ' +
        'Python helper, or give a step log with --steps.'));
    return null;
  }
  const keys = Array.from(byTrainer.keys()).sort((a, b) => a.localeCompare(b, 'en', {numeric: true}));
  const select = el('select', {id: 'overlap-trainer', 'aria-label': 'Trainer'},
      keys.map((key) => el('option', {value: key},
                           key + ' (' + fmtCount(byTrainer.get(key).length) +
                               (bucketed ? ' buckets)' : ' steps)'))));
  const canvas = el('canvas', {id: 'overlap-canvas', 'aria-label': 'I/O and compute per step'});
  const tip = el('div', {class: 'tooltip'});
  const box = el('div', {class: 'chart-box'}, canvas, tip);
  section.appendChild(el('div', {class: 'chart-tools'}, select,
      bucketed ? el('span', {class: 'muted'}, 'each bar: the mean step of a bucket of consecutive steps')
               : null));
  section.appendChild(box);
  section.appendChild(legend(OVERLAP_PARTS.map(([, colour, label]) => [colour, label])));
  let state = null;
  const draw = () => {
    const items = byTrainer.get(select.value) || [];
    state = drawOverlap(canvas, items);
    section.dataset.bars = String(state.bars);
  };
  select.addEventListener('change', draw);
  canvas.addEventListener('pointermove', (e) => {
    if (!state || state.bars === 0) return;
    const index = Math.floor(e.offsetX / state.barWidth);
    const group = state.columns[index];
    if (!group) {
      tip.style.display = 'none';
      return;
    }
    tooltipAt(tip, box, e.offsetX, e.offsetY, describeSteps(group));
  });
  canvas.addEventListener('pointerleave', () => { tip.style.display = 'none'; });
  window.addEventListener('resize', draw);
  draw();
  return {trainers: keys.length};
}

function quantile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))];
}

function drawOverlap(canvas, items) {
  const {ctx, width, height} = sizeCanvas(canvas, OVERLAP_HEIGHT);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);
  const plotTop = 16;
  const plotHeight = height - plotTop - 20;
  const columnsCount = Math.max(1, Math.min(items.length, Math.floor(width)));
  const columns = [];
  for (let c = 0; c < columnsCount; c++) {
    const from = Math.floor(c * items.length / columnsCount);
    const to = Math.max(from + 1, Math.floor((c + 1) * items.length / columnsCount));
    columns.push(items.slice(from, to));
  }
  const parts = columns.map((group) => {
    const sum = {exposed: 0, waitRest: 0, hidden: 0, compute: 0, total: 0};
    for (const item of group) {
      const p = stepParts(item);
      for (const key of Object.keys(sum)) sum[key] += p[key] / group.length;
    }
    return sum;
  });
  const totals = parts.map((p) => p.total).sort((a, b) => a - b);
  const scale = niceCeiling(quantile(totals, 0.98));
  const barWidth = width / columnsCount;
  const yOf = (seconds) => plotTop + plotHeight - Math.min(seconds, scale) / scale * plotHeight;
  parts.forEach((p, c) => {
    let below = 0;
    for (const [key, colour] of OVERLAP_PARTS) {
      const top = yOf(below + p[key]);
      const bottom = yOf(below);
      below += p[key];
      if (bottom - top <= 0) continue;
      ctx.fillStyle = colour;
      ctx.fillRect(c * barWidth, top, Math.max(1, barWidth - (barWidth > 4 ? 1 : 0)), bottom - top);
    }
    if (p.total > scale) {
      ctx.fillStyle = '#1d232b';
      ctx.fillRect(c * barWidth, plotTop - 3, Math.max(1, barWidth - 1), 3);
    }
  });
  ctx.fillStyle = '#5d6773';
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.fillText(fmtDuration(scale) + ' per step (bars above it are cut, marked on top)', 6, 1);
  const first = columns[0][0];
  const last = columns[columns.length - 1][columns[columns.length - 1].length - 1];
  ctx.fillText('step ' + fmtCount(num(first.step !== undefined ? first.step : first.first_step)), 4,
               height - 16);
  ctx.textAlign = 'right';
  ctx.fillText('step ' + fmtCount(num(last.step !== undefined ? last.step : last.last_step)), width - 4,
               height - 16);
  ctx.textAlign = 'left';
  return {bars: columnsCount, barWidth, columns};
}

function describeSteps(group) {
  const first = group[0];
  const last = group[group.length - 1];
  const firstStep = num(first.step !== undefined ? first.step : first.first_step);
  const lastStep = num(last.step !== undefined ? last.step : last.last_step);
  const count = group.reduce((n, item) => n + Math.max(1, num(item.steps) || 1), 0);
  const sum = {exposed: 0, waitRest: 0, hidden: 0, compute: 0, total: 0};
  let waitKnown = true;
  for (const item of group) {
    const p = stepParts(item);
    const weight = Math.max(1, num(item.steps) || 1) / count;
    for (const key of Object.keys(sum)) sum[key] += p[key] * weight;
    waitKnown = waitKnown && p.waitKnown;
  }
  const lines = [count === 1 ? 'step ' + firstStep : 'steps ' + firstStep + '\u2013' + lastStep +
                 ' (mean of ' + fmtCount(count) + ')'];
  lines.push('duration ' + fmtDuration(sum.total));
  if (waitKnown) {
    lines.push('waiting for data ' + fmtDuration(sum.exposed + sum.waitRest) + ' (exposed I/O ' +
               fmtDuration(sum.exposed) + ')');
  } else {
    lines.push('data wait unknown (the step source does not say)');
  }
  lines.push('compute ' + fmtDuration(sum.hidden + sum.compute) + ' (hidden I/O ' +
             fmtDuration(sum.hidden) + ')');
  return lines.join('\n');
}

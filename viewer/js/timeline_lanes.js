// What the timeline shows, lane by lane, from report.timeline: binned series
// (bandwidth per layer and per trainer group, CUDA copies, CPU use, I/O busy)
// and exact spans (steps with their data waits). Drawing is in timeline.js.

const LANE_ORDER = [
  ['layer', 'Read bandwidth per layer'],
  ['process', 'Read bandwidth per trainer group (trainer and its loaders)'],
  ['steps', null],
  ['cuda', 'CUDA copies'],
  ['cpu', 'CPU use (cores)'],
  ['io', 'I/O busy (share of the bin any process was in I/O)'],
];
const MAX_STEP_LANES = 16;
const SERIES_LANE_HEIGHT = 96;
const STEP_LANE_HEIGHT = 34;

// The timeline's lanes: [{kind: 'series'|'steps', title, height, ...}].
function buildLanes(report) {
  const timeline = report.timeline || {};
  const series = list(timeline.series).map((s, i) => ({
    name: shown(s.name), group: s.group || '', unit: s.unit || '', pid: num(s.pid),
    values: list(s.values).map(num), index: i,
  }));
  const byGroup = new Map();
  for (const s of series) {
    if (!byGroup.has(s.group)) byGroup.set(s.group, []);
    byGroup.get(s.group).push(s);
  }
  const lanes = [];
  const known = new Set(LANE_ORDER.map(([g]) => g).concat(['wait']));
  for (const [group, title] of LANE_ORDER) {
    if (group === 'steps') {
      lanes.push(...buildStepLanes(report, byGroup.get('wait') || []));
      continue;
    }
    const members = byGroup.get(group);
    if (members && members.length > 0) lanes.push(seriesLane(title, members));
  }
  for (const [group, members] of byGroup) {
    if (!known.has(group)) lanes.push(seriesLane(shown(group), members));
  }
  // One colour per series over all lanes, so that the legend names each once.
  let colour = 0;
  for (const lane of lanes) {
    if (lane.kind === 'series') for (const s of lane.series) s.colour = colourFor(colour++);
  }
  return lanes;
}

function seriesLane(title, members) {
  const unit = members[0].unit;
  return {
    kind: 'series', title, unit, height: SERIES_LANE_HEIGHT,
    series: members.map((s) => Object.assign({}, s)),
  };
}

// The kinds of waiting a step lane draws, their colours and what they mean.
const WAIT_KINDS = {
  data_wait: {colour: '#d92d20', legend: 'red: waiting for data', text: 'a data wait'},
  inferred_wait: {colour: '#f79009', legend: 'orange: waiting for data, inferred from the trace',
                  text: 'a data wait inferred from the trace'},
  between_steps: {colour: '#fda29b', legend: 'pink: between logged steps, counted as waiting',
                  text: 'the time between two logged steps'},
};

// One lane per trainer: its steps and data waits as exact spans when the
// report carries them, else its binned "waiting for data" share. Spans are
// grouped by pid and rank, as trainers on different hosts may share a pid;
// the binned series name only a pid, so each gets a lane of its own.
function buildStepLanes(report, waitSeries) {
  const byTrainer = new Map();
  for (const span of list((report.timeline || {}).spans)) {
    const pid = num(span.pid);
    const rank = num(span.rank);
    const key = pid + '/' + rank;
    if (!byTrainer.has(key)) byTrainer.set(key, {pid, rank, steps: [], waits: [], marks: []});
    const entry = byTrainer.get(key);
    const item = {start: num(span.start_s), end: num(span.end_s), step: num(span.step)};
    if (span.kind === 'step') entry.steps.push(item);
    else if (WAIT_KINDS[span.kind]) entry.waits.push(Object.assign({kind: span.kind}, item));
    else entry.marks.push(Object.assign({kind: shown(span.kind)}, item));
  }
  const trainers = Array.from(byTrainer.values()).sort((a, b) => a.pid - b.pid || a.rank - b.rank);
  const lanes = trainers.map((t) => {
    for (const key of ['steps', 'waits', 'marks']) t[key].sort((a, b) => a.start - b.start);
    const shownKinds = Object.keys(WAIT_KINDS).filter((k) => t.waits.some((w) => w.kind === k));
    const legend = (shownKinds.length ? shownKinds : ['data_wait'])
                       .map((k) => WAIT_KINDS[k].legend).join('; ');
    return {
      kind: 'steps', height: STEP_LANE_HEIGHT, pid: t.pid, steps: t.steps, waits: t.waits,
      marks: t.marks, waitShare: null,
      title: 'Steps of trainer ' + t.pid + (t.rank >= 0 ? ', rank ' + t.rank : '') +
             ' (' + legend + ')',
    };
  });
  const withSpans = new Set(trainers.map((t) => t.pid));
  for (const s of waitSeries.slice().sort((a, b) => a.pid - b.pid)) {
    if (withSpans.has(s.pid)) continue;
    lanes.push({kind: 'steps', height: STEP_LANE_HEIGHT, pid: s.pid, steps: [], waits: [], marks: [],
                waitShare: s.values,
                title: 'Steps of trainer ' + s.pid + ': share of each bin waiting for data (red)'});
  }
  if (lanes.length > MAX_STEP_LANES) {
    const more = lanes.length - MAX_STEP_LANES;
    lanes.length = MAX_STEP_LANES;
    lanes.push({kind: 'note', height: 4, title: more + ' more trainers not drawn'});
  }
  return lanes;
}

// Index of the first of `items` (one trainer's steps or waits: sorted, not
// overlapping, so their ends are sorted too) that ends at or after `t`.
function firstEndingAfter(items, t) {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid].end < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The largest value of `values` over bins that touch [t0, t1).
function maxOver(values, geometry, t0, t1) {
  const first = Math.max(0, Math.floor((t0 - geometry.start) / geometry.width));
  const last = Math.min(values.length - 1, Math.ceil((t1 - geometry.start) / geometry.width) - 1);
  let m = 0;
  for (let k = first; k <= Math.max(first, last) && k < values.length; k++) m = Math.max(m, values[k]);
  return m;
}

// A round number at or above `v` for a lane's scale: 1, 2 or 5 times a power of ten.
function niceCeiling(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

// Tick times for [t0, t1] at a step that gives about `count` ticks.
function timeTicks(t0, t1, count) {
  const span = Math.max(1e-9, t1 - t0);
  const raw = span / count;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = p;
  for (const m of [1, 2, 5, 10]) {
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  }
  const ticks = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1 + step * 1e-9; t += step) ticks.push(t);
  return {ticks, step};
}

// A tick's time in seconds from the run's start, with the decimals its step needs.
function fmtTick(t, step) {
  const digits = Math.min(9, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)));
  return t.toFixed(digits) + ' s';
}

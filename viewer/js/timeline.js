// The timeline: lanes (timeline_lanes.js) drawn on one canvas, which zooms
// (wheel, buttons, + and - keys) and pans (drag, arrow keys) over the run.
// The window shown is kept in the section's data-view-start/end (seconds),
// which the browser tests read.

const AXIS_HEIGHT = 22;
const LANE_GAP = 6;
const TITLE_HEIGHT = 14;
const MIN_WINDOW_S = 1e-6;

function renderTimeline(report, section) {
  const timeline = report.timeline || {};
  const geometry = {start: num(timeline.start_s), width: num(timeline.bin_width_s), bins: num(timeline.bins)};
  const lanes = buildLanes(report);
  const run = report.run || {};
  const fullEnd = Math.max(geometry.start + geometry.width * geometry.bins, num(run.duration_s), 1e-3);
  if (lanes.length === 0 || geometry.width <= 0) {
    section.appendChild(el('p', {class: 'muted'}, 'No timeline: the run recorded no I/O over time.'));
    return null;
  }
  const view = {t0: geometry.start, t1: fullEnd};
  const range = el('span', {class: 'range', id: 'timeline-range'});
  const canvas = el('canvas', {id: 'timeline-canvas', tabindex: '0',
                               'aria-label': 'Timeline; wheel or +/- to zoom, drag or arrows to pan'});
  const tip = el('div', {class: 'tooltip'});
  const box = el('div', {class: 'chart-box'}, canvas, tip);
  const zoomBy = (factor, centre) => {
    const c = centre === undefined ? (view.t0 + view.t1) / 2 : centre;
    const span = Math.min(fullEnd - geometry.start, Math.max(MIN_WINDOW_S, (view.t1 - view.t0) * factor));
    const t0 = c - (c - view.t0) * span / (view.t1 - view.t0);
    setView(t0, t0 + span);
  };
  const setView = (t0, t1) => {
    const span = t1 - t0;
    t0 = Math.max(geometry.start, Math.min(t0, fullEnd - span));
    view.t0 = t0;
    view.t1 = Math.min(fullEnd, t0 + span);
    draw();
  };
  const button = (label, title, action) =>
      el('button', {type: 'button', title, on: {click: action}}, label);
  section.appendChild(el('div', {class: 'chart-tools'},
      button('Zoom in', 'Zoom in (+)', () => zoomBy(0.5)),
      button('Zoom out', 'Zoom out (-)', () => zoomBy(2)),
      button('Reset', 'Whole run (0)', () => setView(geometry.start, fullEnd)),
      range));
  section.appendChild(box);
  section.appendChild(el('p', {class: 'hint'},
      'Wheel or +/- to zoom around the pointer, drag or arrow keys to pan, double-click to see ' +
      'the whole run. Bins are ' + fmtDuration(geometry.width) + ' wide; each pixel shows the ' +
      'largest value of the bins under it, so short bursts stay visible.'));
  section.appendChild(legend(lanes.filter((l) => l.kind === 'series' && l.series.length <= 12)
                                 .flatMap((l) => l.series.map((s) => [s.colour, s.name]))));

  const height = lanes.reduce((h, l) => h + l.height + TITLE_HEIGHT + LANE_GAP, 0) + AXIS_HEIGHT;
  const draw = () => {
    const {ctx, width} = sizeCanvas(canvas, height);
    drawTimeline(ctx, width, height, lanes, geometry, view);
    range.textContent = fmtDuration(view.t0) + ' \u2013 ' + fmtDuration(view.t1) + ' of ' +
                        fmtDuration(fullEnd - geometry.start);
    section.dataset.viewStart = String(view.t0);
    section.dataset.viewEnd = String(view.t1);
  };
  const timeAt = (x) => view.t0 + (x / canvas.clientWidth) * (view.t1 - view.t0);

  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    zoomBy(Math.pow(1.0015, e.deltaY), timeAt(e.offsetX));
  }, {passive: false});
  let drag = null;
  canvas.addEventListener('pointerdown', (e) => {
    drag = {x: e.clientX, t0: view.t0, t1: view.t1};
    canvas.classList.add('dragging');
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (drag) {
      const dt = (e.clientX - drag.x) / canvas.clientWidth * (drag.t1 - drag.t0);
      setView(drag.t0 - dt, drag.t1 - dt);
      return;
    }
    const text = describeAt(lanes, geometry, timeAt(e.offsetX), e.offsetY);
    if (text) tooltipAt(tip, box, e.offsetX, e.offsetY, text);
    else tip.style.display = 'none';
  });
  const endDrag = () => {
    drag = null;
    canvas.classList.remove('dragging');
  };
  canvas.addEventListener('pointerup', endDrag);
  canvas.addEventListener('pointercancel', endDrag);
  canvas.addEventListener('pointerleave', () => { tip.style.display = 'none'; });
  canvas.addEventListener('dblclick', () => setView(geometry.start, fullEnd));
  canvas.addEventListener('keydown', (e) => {
    const pan = (view.t1 - view.t0) * 0.2;
    const actions = {
      '+': () => zoomBy(0.5), '=': () => zoomBy(0.5), '-': () => zoomBy(2),
      '0': () => setView(geometry.start, fullEnd),
      'ArrowLeft': () => setView(view.t0 - pan, view.t1 - pan),
      'ArrowRight': () => setView(view.t0 + pan, view.t1 + pan),
    };
    if (actions[e.key]) {
      e.preventDefault();
      actions[e.key]();
    }
  });
  window.addEventListener('resize', draw);
  draw();
  return {lanes: lanes.length};
}

function drawTimeline(ctx, width, height, lanes, geometry, view) {
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);
  const x = (t) => (t - view.t0) / (view.t1 - view.t0) * width;
  let y = 0;
  for (const lane of lanes) {
    ctx.fillStyle = '#5d6773';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    ctx.fillText(lane.title, 6, y + 2);
    const top = y + TITLE_HEIGHT;
    if (lane.kind === 'series') drawSeriesLane(ctx, lane, geometry, view, width, top, x);
    else if (lane.kind === 'steps') drawStepLane(ctx, lane, geometry, view, width, top, x);
    lane.top = top;
    y = top + lane.height + LANE_GAP;
    ctx.strokeStyle = '#eef0f3';
    ctx.beginPath();
    ctx.moveTo(0, y - LANE_GAP / 2);
    ctx.lineTo(width, y - LANE_GAP / 2);
    ctx.stroke();
  }
  const {ticks, step} = timeTicks(view.t0, view.t1, Math.max(2, Math.floor(width / 110)));
  ctx.fillStyle = '#5d6773';
  ctx.strokeStyle = '#d8dde3';
  ctx.textBaseline = 'top';
  for (const t of ticks) {
    const px = Math.round(x(t)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(px, 0);
    ctx.lineTo(px, height - AXIS_HEIGHT + 4);
    ctx.globalAlpha = 0.35;
    ctx.stroke();
    ctx.globalAlpha = 1;
    ctx.fillText(fmtTick(t, step), px + 3, height - AXIS_HEIGHT + 6);
  }
}

function drawSeriesLane(ctx, lane, geometry, view, width, top, x) {
  const h = lane.height;
  const columns = Math.max(1, Math.floor(width));
  const dt = (view.t1 - view.t0) / columns;
  let peak = 0;
  const sampled = lane.series.map((s) => {
    const v = new Float64Array(columns);
    for (let c = 0; c < columns; c++) {
      v[c] = maxOver(s.values, geometry, view.t0 + c * dt, view.t0 + (c + 1) * dt);
      peak = Math.max(peak, v[c]);
    }
    return v;
  });
  const scale = lane.unit === 'share' ? 1 : niceCeiling(peak);
  ctx.fillStyle = '#5d6773';
  ctx.textAlign = 'right';
  ctx.fillText('max ' + fmtUnit(scale, lane.unit), width - 6, top - TITLE_HEIGHT + 2);
  ctx.textAlign = 'left';
  lane.series.forEach((s, i) => {
    const v = sampled[i];
    ctx.strokeStyle = s.colour;
    ctx.fillStyle = s.colour;
    ctx.lineWidth = 1.25;
    ctx.beginPath();
    for (let c = 0; c < columns; c++) {
      const py = top + h - (v[c] / scale) * h;
      if (c === 0) ctx.moveTo(0, py);
      else ctx.lineTo(c, py);
      ctx.lineTo(c + 1, py);
    }
    ctx.stroke();
    if (lane.series.length === 1) {
      ctx.lineTo(columns, top + h);
      ctx.lineTo(0, top + h);
      ctx.globalAlpha = 0.15;
      ctx.fill();
      ctx.globalAlpha = 1;
    }
  });
}

function drawStepLane(ctx, lane, geometry, view, width, top, x) {
  const h = lane.height;
  if (lane.steps.length > 0 || lane.waits.length > 0) {
    for (let i = firstEndingAfter(lane.steps, view.t0); i < lane.steps.length; i++) {
      const s = lane.steps[i];
      if (s.start > view.t1) break;
      ctx.fillStyle = s.step % 2 === 0 ? '#d0d5dd' : '#e4e7ec';
      ctx.fillRect(x(s.start), top + 4, Math.max(1, x(s.end) - x(s.start)), h - 8);
    }
    for (let i = firstEndingAfter(lane.waits, view.t0); i < lane.waits.length; i++) {
      const w = lane.waits[i];
      if (w.start > view.t1) break;
      ctx.fillStyle = WAIT_KINDS[w.kind].colour;
      ctx.fillRect(x(w.start), top + 4, Math.max(1, x(w.end) - x(w.start)), h - 8);
    }
  } else if (lane.waitShare) {
    const columns = Math.max(1, Math.floor(width));
    const dt = (view.t1 - view.t0) / columns;
    ctx.fillStyle = '#e4e7ec';
    ctx.fillRect(0, top + 4, width, h - 8);
    ctx.fillStyle = '#d92d20';
    for (let c = 0; c < columns; c++) {
      const share = Math.min(1, maxOver(lane.waitShare, geometry, view.t0 + c * dt, view.t0 + (c + 1) * dt));
      if (share <= 0) continue;
      ctx.globalAlpha = 0.15 + 0.85 * share;
      ctx.fillRect(c, top + 4, 1, h - 8);
    }
    ctx.globalAlpha = 1;
  }
  ctx.fillStyle = '#1d232b';
  for (const m of lane.marks) {
    if (m.start < view.t0 || m.start > view.t1) continue;
    ctx.fillRect(x(m.start), top, 1.5, h);
  }
}

// The tooltip text for time `t` at height `y`: the lane's values there.
function describeAt(lanes, geometry, t, y) {
  const lane = lanes.find((l) => l.top !== undefined && y >= l.top - TITLE_HEIGHT && y < l.top + l.height);
  if (!lane) return '';
  const at = 'at ' + fmtDuration(t);
  const k = Math.floor((t - geometry.start) / geometry.width);
  if (lane.kind === 'series') {
    const lines = lane.series.slice(0, 12).map((s) => s.name + ': ' + fmtUnit(s.values[k] || 0, s.unit));
    return [at + ' (bin ' + (k + 1) + ')'].concat(lines).join('\n');
  }
  if (lane.kind === 'steps') {
    const step = lane.steps[firstEndingAfter(lane.steps, t)];
    const wait = lane.waits[firstEndingAfter(lane.waits, t)];
    const lines = [at];
    if (step && step.start <= t) {
      lines.push('step ' + step.step + ': ' + fmtDuration(step.end - step.start));
      const waited = lane.waits.filter((w) => w.step === step.step && w.kind !== 'between_steps')
                         .reduce((sum, w) => sum + (w.end - w.start), 0);
      lines.push('waiting for data: ' + fmtDuration(waited));
    }
    if (wait && wait.start <= t) {
      lines.push('in ' + WAIT_KINDS[wait.kind].text + ' of ' + fmtDuration(wait.end - wait.start));
    }
    if (lane.waitShare && lane.steps.length === 0) {
      lines.push('share of the bin waiting for data: ' + fmtPercent(lane.waitShare[k] || 0));
    }
    return lines.join('\n');
  }
  return '';
}

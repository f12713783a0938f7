// The Python profile of each trainer (report.py_profiles): what preparation
// costs, grouped (transforms by class, decoding, collate_fn, __getitem__),
// an icicle of preparation's stacks (outermost frame on top; width = CPU
// time; click a frame to zoom into it, the top bar to zoom out), preparation
// by function, and the trainer's own hot spots during compute.

const ICICLE_ROW = 18;
const ICICLE_WIDTH = 1000;

function renderPython(report, section) {
  const profiles = list(report.py_profiles);
  if (profiles.length === 0) {
    section.appendChild(el('p', {class: 'muted'},
        'No Python stack samples: run with --torch-steps or --py-samples to see which Python ' +
        'code the loaders spend their time in.'));
    return;
  }
  profiles.forEach((p, i) => renderProfile(p, i, section));
}

function renderProfile(p, index, section) {
  const scope = p.scope === 'data waits' ? "the loaders' CPU during its data waits"
                                         : "its loaders' CPU over the whole run (steps or waits unknown)";
  section.appendChild(el('h3', null, 'Trainer ' + p.trainer_pid + ': ' + scope));
  section.appendChild(el('p', {class: 'muted'}, fmtDuration(p.prep_cpu_s) + ' of CPU, ' +
                                                 fmtCount(p.prep_samples) + ' samples.'));
  const costs = list(p.prep_costs).map((c) => ({head: c, members: []}));
  section.appendChild(sortableTable('py-costs-' + index, 'What preparation costs, by what you can change.', [
    {label: 'share', num: true, value: (c) => num(c.share), text: (c) => fmtPercent(c.share)},
    {label: 'CPU', num: true, value: (c) => num(c.cpu_s), text: (c) => fmtDuration(c.cpu_s)},
    {label: 'kind', value: (c) => shown(c.kind)},
    {label: 'what', value: (c) => shown(c.name)},
  ], costs));
  if (list(p.prep_stacks).length > 0) {
    section.appendChild(el('h3', null, 'Preparation, stack by stack'));
    section.appendChild(icicle('py-flame-' + index, p));
  }
  if (list(p.prep_functions).length > 0) {
    section.appendChild(el('h3', null, 'Preparation by function'));
    section.appendChild(functionTable('py-functions-' + index, p.prep_functions));
  }
  if (list(p.compute_functions).length > 0) {
    section.appendChild(el('h3', null, 'Trainer ' + p.trainer_pid + "'s hot spots during compute (" +
                                       fmtDuration(p.compute_cpu_s) + ' of CPU)'));
    section.appendChild(functionTable('py-compute-' + index, p.compute_functions));
  }
}

function functionTable(id, rows) {
  return sortableTable(id, 'Total: samples with the function on the stack; self: samples in it.', [
    {label: 'total', num: true, value: (f) => num(f.total_share), text: (f) => fmtPercent(f.total_share)},
    {label: 'self', num: true, value: (f) => num(f.self_share), text: (f) => fmtPercent(f.self_share)},
    {label: 'function', value: (f) => shown(f.function)},
    {label: 'where', value: (f) => shown(f.file) + ':' + num(f.line), cls: 'path'},
  ], list(rows).map((f) => ({head: f, members: []})));
}

// The stacks as a tree: {name, value, children: Map}.
function stackTree(p) {
  const names = list(p.prep_frame_names);
  const root = {name: 'all', value: 0, children: new Map()};
  for (const s of list(p.prep_stacks)) {
    const value = num(s.cpu_s);
    root.value += value;
    let node = root;
    for (const f of list(s.frames)) {
      const name = names[f] === undefined ? '?' : names[f];
      let child = node.children.get(name);
      if (!child) {
        child = {name, value: 0, children: new Map(), parent: node};
        node.children.set(name, child);
      }
      child.value += value;
      node = child;
    }
  }
  return root;
}

function depthOf(node) {
  let d = 0;
  for (const c of node.children.values()) d = Math.max(d, 1 + depthOf(c));
  return d;
}

function icicle(id, p) {
  const tree = stackTree(p);
  const wrap = el('div', {class: 'icicle', id});
  function draw(focus) {
    wrap.textContent = '';
    const rows = depthOf(focus) + 1;
    const box = svg('svg', {viewBox: '0 0 ' + ICICLE_WIDTH + ' ' + rows * ICICLE_ROW, role: 'img',
                            'aria-label': 'Icicle of preparation time', width: '100%'});
    const total = tree.value || 1;
    let drawn = 0;
    function place(node, x, depth, width) {
      if (width < 0.5) return;
      const share = node.value / total;
      const g = svg('g', {class: 'frame', 'data-name': node.name, 'data-share': share.toFixed(4),
                          on: {click: () => draw(node === focus && node.parent ? node.parent : node)}},
          svg('rect', {x: x.toFixed(2), y: depth * ICICLE_ROW, width: Math.max(0, width - 0.5).toFixed(2),
                       height: ICICLE_ROW - 1, fill: colourFor(hash(node.name))}),
          svg('title', {text: node.name + ': ' + fmtPercent(share) + ' (' + fmtDuration(node.value) + ')'}));
      if (width > 60) {
        const chars = Math.floor(width / 7);
        const label = node.name.length > chars ? node.name.slice(0, chars - 1) + '…' : node.name;
        g.appendChild(svg('text', {x: (x + 3).toFixed(2), y: depth * ICICLE_ROW + 13, text: label}));
      }
      box.appendChild(g);
      ++drawn;
      let cx = x;
      const children = [...node.children.values()].sort((a, b) => b.value - a.value);
      for (const c of children) {
        const w = width * c.value / (node.value || 1);
        place(c, cx, depth + 1, w);
        cx += w;
      }
    }
    place(focus, 0, 0, ICICLE_WIDTH);
    wrap.dataset.frames = String(drawn);
    wrap.dataset.focus = focus.name;
    wrap.appendChild(box);
  }
  draw(tree);
  return wrap;
}

function hash(text) {
  let h = 0;
  for (let i = 0; i < text.length; ++i) h = (h * 31 + text.charCodeAt(i)) | 0;
  return Math.abs(h);
}

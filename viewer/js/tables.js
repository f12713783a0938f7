// The report's tables: layers, mapped reads and io_uring requests, files,
// directories, HDF5 datasets, TFRecord files, processes (loaders under their
// trainer), CUDA copies and epochs.

const ROLE_NAMES = {TRAINER: 'trainer', LOADER: 'loader', HELPER: 'helper'};

function flat(rows) { return rows.map((row) => ({head: row, members: []})); }

function renderTables(report, section) {
  const layers = list(report.layers).filter((l) => num(l.ops) > 0);
  if (layers.length > 0) {
    section.appendChild(el('h3', null, 'Layers'));
    section.appendChild(sortableTable('layers-table',
        'Each API the job read and wrote through, counted in calls, page faults or io_uring ' +
            'requests. HDF5 and TFRecord hold what the POSIX reads beneath them moved; a mapped ' +
            'read is a page fault in a mapped data file, its bytes the pages the fault mapped ' +
            '(re-reads of mapped pages are not seen); an io_uring read is one request. Time is ' +
            'the events\u2019 durations summed (a minor fault\u2019s is not measured); busy is ' +
            'their union over every process.',
        layerColumns(report), flat(layers)));
  }
  renderMapped(report, section);
  renderUring(report, section);
  const files = list(report.files);
  const other = report.other_files || {};
  section.appendChild(el('h3', null, 'Files'));
  if (files.length === 0) {
    section.appendChild(el('p', {class: 'muted'}, 'No file was read or written.'));
  } else {
    const footer = num(other.files) > 0
        ? Object.assign({}, other, {path: fmtCount(other.files) + ' more files, summed', category: ''})
        : null;
    section.appendChild(sortableTable('files-table',
        'The files with most bytes; "kind" is data, runtime (Python, libraries) or system.',
        fileColumns('file'), flat(files.slice()), footer));
  }
  const dirs = list(report.directories);
  if (dirs.length > 0) {
    section.appendChild(el('h3', null, 'Directories of data files'));
    section.appendChild(sortableTable('directories-table', 'Data files summed by directory.',
                                      fileColumns('directory'), flat(dirs.slice())));
  }
  const datasets = list(report.datasets);
  if (datasets.length > 0) {
    section.appendChild(el('h3', null, 'HDF5 datasets'));
    section.appendChild(sortableTable('datasets-table',
        'Each H5Dread and the POSIX reads HDF5 made for it.', datasetColumns(), flat(datasets.slice())));
  }
  const tfrecords = list(report.tfrecord_files);
  if (tfrecords.length > 0) {
    section.appendChild(el('h3', null, 'TFRecord files'));
    section.appendChild(sortableTable('tfrecord-table',
        'Records the job read, and how its reads covered them.', tfrecordColumns(),
        flat(tfrecords.slice())));
  }
  section.appendChild(el('h3', null, 'Processes'));
  section.appendChild(sortableTable('processes-table',
      'Loaders are listed under the trainer they serve; sorting keeps them together.',
      processColumns(), processGroups(list(report.processes))));
  const copies = list(report.cuda_copies);
  if (copies.length > 0) {
    section.appendChild(el('h3', null, 'CUDA copies'));
    section.appendChild(sortableTable('cuda-table',
        'Copy calls by direction and host memory; time is the calls\u2019 own (an async call\u2019s is its enqueueing).',
        cudaColumns(), flat(copies.slice())));
  }
  const epochs = list((report.epochs || {}).epoch);
  if (epochs.length > 0) {
    section.appendChild(el('h3', null, 'Epochs'));
    section.appendChild(sortableTable('epochs-table', 'Per epoch: what was read and how fast.',
                                      epochColumns(), flat(epochs.slice())));
  }
}

// A layer's count in its unit, as the text report gives it: page faults,
// io_uring requests, or calls.
function layerCount(report, l) {
  if (l.unit === 'faults') return num(l.reads);
  if (l.unit === 'requests') return num((report.io_uring || {}).requests);
  return num(l.ops);
}

function layerColumns(report) {
  const time = (l) => (num(l.time_s) > 0 ? fmtDuration(l.time_s) : '');
  const unit = (l) => (l.unit === 'faults' || l.unit === 'requests' ? l.unit : 'calls');
  return [
    {label: 'layer', value: (l) => layerLabel(l.name)},
    {label: 'count', num: true, value: (l) => layerCount(report, l),
     text: (l) => fmtCount(layerCount(report, l)) + ' ' + unit(l)},
    {label: 'reads', num: true, value: (l) => num(l.reads), text: (l) => fmtCount(l.reads)},
    {label: 'read', num: true, value: (l) => num(l.read_bytes), text: (l) => fmtBytes(l.read_bytes)},
    {label: 'writes', num: true, value: (l) => num(l.writes), text: (l) => fmtCount(l.writes)},
    {label: 'written', num: true, value: (l) => num(l.write_bytes), text: (l) => fmtBytes(l.write_bytes)},
    {label: 'time', num: true, value: (l) => num(l.time_s), text: time},
    {label: 'busy', num: true, value: (l) => num(l.busy_s), text: (l) => fmtDuration(l.busy_s)},
  ];
}

// What the analysis says its figures cannot show, as a list.
function caveats(items) {
  return items.length ? el('ul', {class: 'caveats'}, items.map((c) => el('li', null, shown(c)))) : null;
}

function renderMapped(report, section) {
  const m = report.mapped_reads;
  if (!m) return;
  section.appendChild(el('h3', null, 'Mapped reads'));
  const processes = (n) => fmtCount(n) + (num(n) === 1 ? ' process' : ' processes');
  const how = [];
  if (num(m.processes_sampled) > 0) how.push('perf samples in ' + processes(m.processes_sampled));
  if (num(m.processes_counted) > 0) how.push('thread counters in ' + processes(m.processes_counted));
  const parts = ['Page faults in file mappings, seen by ' + (how.length ? how.join(' and ') : shown(m.source)) + '.'];
  if (num(m.faults) > 0 || num(m.processes_sampled) > 0) {
    parts.push(fmtCount(m.faults) + ' faults, ' + fmtCount(m.major_faults) + ' major (' +
               fmtDuration(m.major_s) + ' waiting for storage), mapped ' + fmtBytes(m.span_bytes) +
               ', of which the program touched at least ' + fmtBytes(m.touched_bytes) + '.');
  }
  if (num(m.processes_counted) > 0) {
    parts.push('Counted: ' + fmtCount(m.counted_minor_faults) + ' minor and ' +
               fmtCount(m.counted_major_faults) + ' major faults, ' + fmtBytes(m.counted_read_bytes) +
               ' read from storage.');
  }
  section.appendChild(el('p', {id: 'mapped-summary'}, parts.join(' ')));
  const notSeen = caveats(list(m.caveats));
  if (notSeen) section.appendChild(notSeen);
  const files = list(m.files);
  if (files.length === 0) return;
  const more = num(m.file_count) - files.length;
  section.appendChild(sortableTable('mapped-table',
      'Per mapped file: its page faults and the span of pages they mapped' +
          (more > 0 ? '; ' + fmtCount(more) + ' more files are in the sums above.' : '.'),
      [
        {label: 'file', value: (f) => shown(f.path) + (num(f.estimated_spans) > 0 ? ' (some spans estimated)' : ''),
         cls: 'path'},
        {label: 'faults', num: true, value: (f) => num(f.faults), text: (f) => fmtCount(f.faults)},
        {label: 'major', num: true, value: (f) => num(f.major_faults), text: (f) => fmtCount(f.major_faults)},
        {label: 'major time', num: true, value: (f) => num(f.major_s), text: (f) => fmtDuration(f.major_s)},
        {label: 'span', num: true, value: (f) => num(f.span_bytes), text: (f) => fmtBytes(f.span_bytes)},
        {label: 'touched', num: true, value: (f) => num(f.touched_bytes), text: (f) => fmtBytes(f.touched_bytes)},
      ], flat(files.slice())));
}

function renderUring(report, section) {
  const u = report.io_uring;
  if (!u) return;
  section.appendChild(el('h3', null, 'io_uring requests'));
  section.appendChild(el('p', {id: 'uring-summary'},
      fmtCount(u.requests) + ' requests in ' + fmtCount(u.calls) + ' calls into the kernel: ' +
      fmtCount(u.reads) + ' reads (' + fmtBytes(u.read_bytes) + ', ' + fmtDuration(u.read_seconds) +
      ' submit to completion), ' + fmtCount(u.writes) + ' writes (' + fmtBytes(u.write_bytes) + '), ' +
      fmtCount(u.other) + ' other, ' + fmtCount(u.failed) + ' failed, ' + fmtCount(u.incomplete) +
      ' without a completion seen.'));
  const notSeen = caveats(list(u.caveats));
  if (notSeen) section.appendChild(notSeen);
  const files = list(u.files);
  if (files.length === 0) return;
  const more = num(u.file_count) - files.length;
  section.appendChild(sortableTable('uring-table',
      'Per file: the requests io_uring carried, with the bytes their completions reported' +
          (more > 0 ? '; ' + fmtCount(more) + ' more files are in the sums above.' : '.'),
      [
        {label: 'file', value: (f) => shown(f.path), cls: 'path'},
        {label: 'reads', num: true, value: (f) => num(f.reads), text: (f) => fmtCount(f.reads)},
        {label: 'read', num: true, value: (f) => num(f.read_bytes), text: (f) => fmtBytes(f.read_bytes)},
        {label: 'writes', num: true, value: (f) => num(f.writes), text: (f) => fmtCount(f.writes)},
        {label: 'written', num: true, value: (f) => num(f.write_bytes), text: (f) => fmtBytes(f.write_bytes)},
        {label: 'other', num: true, value: (f) => num(f.other), text: (f) => fmtCount(f.other)},
        {label: 'incomplete', num: true, value: (f) => num(f.incomplete), text: (f) => fmtCount(f.incomplete)},
      ], flat(files.slice())));
}

function datasetColumns() {
  return [
    {label: 'dataset', value: (d) => shown(d.file) + ':' + shown(d.name), cls: 'path'},
    {label: 'layout', value: (d) => d.layout || ''},
    {label: 'H5Dread calls', num: true, value: (d) => num(d.reads), text: (d) => fmtCount(d.reads)},
    {label: 'asked for', num: true, value: (d) => num(d.logical_bytes), text: (d) => fmtBytes(d.logical_bytes)},
    {label: 'POSIX reads', num: true, value: (d) => num(d.posix_reads), text: (d) => fmtCount(d.posix_reads)},
    {label: 'POSIX bytes', num: true, value: (d) => num(d.posix_bytes), text: (d) => fmtBytes(d.posix_bytes)},
    {label: 'bytes read / asked', num: true, value: (d) => num(d.byte_amplification),
     text: (d) => num(d.byte_amplification).toFixed(2) + 'x'},
    {label: 'reads per call', num: true, value: (d) => num(d.reads_per_call),
     text: (d) => num(d.reads_per_call).toFixed(1)},
    {label: 'time', num: true, value: (d) => num(d.read_time_s), text: (d) => fmtDuration(d.read_time_s)},
  ];
}

function tfrecordColumns() {
  return [
    {label: 'file', value: (t) => shown(t.path), cls: 'path'},
    {label: 'compression', value: (t) => t.compression || ''},
    {label: 'records', num: true, value: (t) => num(t.records), text: (t) => fmtCount(t.records)},
    {label: 'mean record', num: true, value: (t) => (num(t.records) > 0 ? num(t.record_bytes) / num(t.records) : 0),
     text: (t) => fmtBytes(num(t.records) > 0 ? num(t.record_bytes) / num(t.records) : 0)},
    {label: 'reads', num: true, value: (t) => num(t.posix_reads), text: (t) => fmtCount(t.posix_reads)},
    {label: 'records per read', num: true, value: (t) => num(t.records_per_read),
     text: (t) => num(t.records_per_read).toFixed(2)},
    {label: 'order', value: (t) => shown(t.note || t.order || '')},
  ];
}

function processColumns() {
  return [
    {label: 'pid', num: true, value: (p) => num(p.pid), text: (p) => String(num(p.pid))},
    {label: 'role', value: (p) => ROLE_NAMES[p.role] || '?'},
    {label: 'host', value: (p) => shown(p.host)},
    {label: 'rank', num: true, value: (p) => num(p.rank),
     text: (p) => (num(p.rank) >= 0 && p.rank !== undefined ? String(num(p.rank)) : '')},
    {label: 'read', num: true, value: (p) => num(p.read_bytes), text: (p) => fmtBytes(p.read_bytes)},
    {label: 'reads', num: true, value: (p) => num(p.reads), text: (p) => fmtCount(p.reads)},
    {label: 'written', num: true, value: (p) => num(p.write_bytes), text: (p) => fmtBytes(p.write_bytes)},
    {label: 'I/O busy', num: true, value: (p) => num(p.io_busy_s), text: (p) => fmtDuration(p.io_busy_s)},
    {label: 'CPU', num: true, value: (p) => num(p.cpu_user_s) + num(p.cpu_system_s),
     text: (p) => fmtDuration(num(p.cpu_user_s) + num(p.cpu_system_s))},
    {label: 'ran', num: true, value: (p) => num(p.end_s) - num(p.start_s),
     text: (p) => fmtDuration(num(p.end_s) - num(p.start_s))},
    {label: 'ended', value: (p) => shown(p.end)},
    {label: 'events', num: true, value: (p) => num(p.events), text: (p) => fmtCount(p.events)},
    {label: 'command', value: (p) => list(p.argv).map(shown).join(' '), cls: 'path'},
  ];
}

// Trainers head their group; each loader joins its trainer's; helpers and
// loaders whose trainer is not listed stand alone.
function processGroups(processes) {
  const groups = new Map();
  const result = [];
  for (const p of processes) {
    if (p.role === 'TRAINER') {
      const g = {head: p, members: []};
      groups.set(num(p.pid), g);
      result.push(g);
    }
  }
  for (const p of processes) {
    if (p.role === 'TRAINER') continue;
    const g = p.role === 'LOADER' ? groups.get(num(p.trainer_pid)) : undefined;
    if (g) g.members.push(p);
    else result.push({head: p, members: []});
  }
  return result;
}

function cudaColumns() {
  return [
    {label: 'direction', value: (c) => c.direction || ''},
    {label: 'host memory', value: (c) => c.host_memory || ''},
    {label: 'mode', value: (c) => (c.async ? 'async' : 'sync')},
    {label: 'copies', num: true, value: (c) => num(c.copies), text: (c) => fmtCount(c.copies)},
    {label: 'bytes', num: true, value: (c) => num(c.bytes), text: (c) => fmtBytes(c.bytes)},
    {label: 'time in calls', num: true, value: (c) => num(c.time_s), text: (c) => fmtDuration(c.time_s)},
    {label: 'of which in steps', num: true, value: (c) => num(c.in_steps_s),
     text: (c) => fmtDuration(c.in_steps_s)},
  ];
}

function epochColumns() {
  return [
    {label: 'epoch', num: true, value: (e) => num(e.index), text: (e) => String(num(e.index))},
    {label: 'start', num: true, value: (e) => num(e.start_s), text: (e) => fmtDuration(e.start_s)},
    {label: 'length', num: true, value: (e) => num(e.end_s) - num(e.start_s),
     text: (e) => fmtDuration(num(e.end_s) - num(e.start_s))},
    {label: 'read', num: true, value: (e) => num(e.read_bytes), text: (e) => fmtBytes(e.read_bytes)},
    {label: 'mean read latency', num: true, value: (e) => num(e.mean_read_latency_s),
     text: (e) => fmtDuration(e.mean_read_latency_s)},
    {label: 'steps', num: true, value: (e) => num(e.steps), text: (e) => fmtCount(e.steps)},
    {label: 'median step', num: true, value: (e) => num(e.median_step_s),
     text: (e) => fmtDuration(e.median_step_s)},
  ];
}

// The run at a glance, the findings, the notes and the footer.

function roleCounts(report) {
  const counts = {TRAINER: 0, LOADER: 0, HELPER: 0};
  for (const p of list(report.processes)) {
    if (p.role in counts) counts[p.role]++;
  }
  return counts;
}

function plural(n, word) { return fmtCount(n) + ' ' + word + (Math.round(n) === 1 ? '' : 's'); }

function fact(label, value, sub, extraClass) {
  return el('div', {class: 'fact' + (extraClass ? ' ' + extraClass : '')},
            el('dt', null, label),
            el('dd', null, value, sub ? el('span', {class: 'sub'}, sub) : null));
}

// Where the data waits come from, for the data stall's fact.
function waitSource(stats) {
  const w = stats.data_waits || {};
  const parts = [];
  if (num(w.measured_steps) > 0) {
    parts.push('measured (' + list(w.measured_by).map(shown).join(', ') + ') for ' +
               plural(w.measured_steps, 'step'));
  }
  if (num(w.inferred_steps) > 0) {
    parts.push('inferred from the trace for ' + plural(w.inferred_steps, 'step') +
               (list(w.inferred_by).length
                    ? ' (' + list(w.inferred_by).map((b) => shown(b.how)).join('; ') + ')'
                    : ''));
  }
  return parts.length ? '; waits ' + parts.join(', ') : '';
}

function renderGlance(report, section) {
  const run = report.run || {};
  const stats = report.step_statistics || {};
  const overlap = report.overlap || {};
  const counts = roleCounts(report);
  const command = list(run.command).map(shown).join(' ');
  document.getElementById('command').textContent = command || '(command unknown)';
  if (command) document.title = 'iotap report: ' + command.slice(0, 80);

  const hosts = list(run.hosts).map(shown);
  const started = num(run.start_unix_s) > 0
      ? 'from ' + new Date(num(run.start_unix_s) * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC'
      : '';
  const stall = num(run.data_stall_share);
  const between = stats.between_steps || {};
  const compared = stats.data_waits || {};
  const facts = [
    fact('Duration', fmtDuration(run.duration_s), started),
    fact('Hosts', fmtCount(hosts.length), hosts.slice(0, 3).join(', ') + (hosts.length > 3 ? ', ...' : '')),
    fact('Processes', fmtCount(run.processes),
         plural(counts.TRAINER, 'trainer') + ', ' + plural(counts.LOADER, 'loader') + ', ' +
             plural(counts.HELPER, 'helper')),
    fact('Steps', fmtCount(run.steps),
         num(run.steps) > 0 ? 'median ' + fmtDuration(stats.median_step_s) + ', p90 ' +
                                  fmtDuration(stats.p90_step_s)
                            : 'no step source'),
    fact('Data read', fmtBytes(run.bytes_read), 'written ' + fmtBytes(run.bytes_written)),
    fact('Read throughput', fmtRate(run.read_throughput_bytes_per_s), 'bytes read / duration'),
    stall >= 0
        ? fact('Data stall', fmtPercent(stall),
               'of step time waiting for data; of the wait: fetch ' + fmtPercent(stats.fetch_share) +
                   ', preparation ' + fmtPercent(stats.prep_share) + ', other ' +
                   fmtPercent(stats.other_share) + waitSource(stats),
               stall >= 0.2 ? 'stall-high' : '')
        : fact('Data stall', 'unknown', num(run.steps) > 0 ? 'the step source does not say when steps waited'
                                                           : 'no steps recorded'),
    num(between.share) >= 0.01
        ? fact('Between steps', fmtPercent(between.share),
               'of the trainers\u2019 time between logged steps (' + fmtDuration(between.total_s) +
                   '), counted as waiting; fetch ' + fmtPercent(between.fetch_share) +
                   ', preparation ' + fmtPercent(between.prep_share) + ', other ' +
                   fmtPercent(between.other_share))
        : null,
    num(compared.compared_steps) > 0
        ? fact('Waits inferred / measured',
               fmtPercent(compared.inferred_stall_share) + ' / ' + fmtPercent(compared.measured_stall_share),
               'of the time of ' + plural(compared.compared_steps, 'step') +
                   '; the inferred waits cover ' + fmtPercent(compared.agreement_share) +
                   ' of the measured wait')
        : null,
    fact('I/O hidden behind compute',
         num(overlap.hidden_io_s) + num(overlap.exposed_io_s) > 0 ? fmtPercent(overlap.hidden_share) : 'n/a',
         'hidden ' + fmtDuration(overlap.hidden_io_s) + ', exposed ' + fmtDuration(overlap.exposed_io_s)),
    fact('I/O busy', fmtDuration(run.io_busy_s), 'union of every process\u2019s data-file I/O'),
    fact('Events traced', fmtCount(run.events),
         fmtCount(run.dropped_events) + ' dropped, ' + plural(run.trace_files, 'trace file')),
  ];
  section.appendChild(el('dl', {class: 'facts', id: 'facts'}, facts.filter((f) => f !== null)));
}

function renderFindings(report, section) {
  const findings = list(report.findings);
  if (findings.length === 0) {
    section.appendChild(el('p', {class: 'muted'}, 'No findings: nothing in this run crossed a rule\u2019s threshold.'));
    return;
  }
  findings.forEach((f, i) => {
    const severity = f.severity || 'INFO';
    const objects = list(f.objects);
    const card = el('article', {class: 'finding ' + severity, 'data-finding-id': f.id || ''},
        el('h3', null, el('span', {class: 'severity'}, severity), (i + 1) + '. ' + shown(f.title)),
        el('p', null, shown(f.summary)),
        list(f.evidence).length > 0
            ? el('ul', {class: 'evidence'},
                 list(f.evidence).map((e) => el('li', null, shown(e.name) + ': ' + shown(e.text))))
            : null,
        objects.length > 0
            ? el('p', {class: 'muted'}, 'Concerns: ',
                 el('span', {class: 'path'}, objects.slice(0, 8).map(shown).join(', ')),
                 objects.length > 8 ? ' and ' + (objects.length - 8) + ' more' : '')
            : null,
        f.recommendation ? el('p', {class: 'advice'}, el('strong', null, 'What to do: '),
                              shown(f.recommendation))
                         : null);
    section.appendChild(card);
  });
}

function renderNotes(report, section) {
  const notes = list(report.notes);
  const condensed = report.condensed || {};
  const items = notes.map((n) => el('li', {class: n.level === 'WARNING' ? 'warning' : ''},
                                     shown(n.message)));
  if (num(condensed.steps_left_out) > 0) {
    items.push(el('li', null, 'This page carries ' + fmtCount(list(report.step_buckets).length) +
                                  ' buckets of consecutive steps instead of ' +
                                  fmtCount(condensed.steps_left_out) +
                                  ' single steps, to stay small; the timeline shows waits binned.'));
  }
  if (num(condensed.step_trainers_left_out) > 0) {
    items.push(el('li', null, 'Steps of ' + fmtCount(condensed.step_trainers_left_out) +
                                  ' trainers that waited least are not carried; the per-step chart ' +
                                  'shows the trainers that waited longest.'));
  }
  if (num(condensed.processes_left_out) > 0) {
    items.push(el('li', null, fmtCount(condensed.processes_left_out) +
                                  ' processes that read least are left out of the process table.'));
  }
  if (num(condensed.series_left_out) > 0) {
    items.push(el('li', null, fmtCount(condensed.series_left_out) +
                                  ' per-process timeline series of the least busy trainers are left out.'));
  }
  if (items.length === 0) {
    section.appendChild(el('p', {class: 'muted'}, 'None.'));
  } else {
    section.appendChild(el('ul', {id: 'notes-list'}, items));
  }
}

function renderFooter(report) {
  const run = report.run || {};
  const sources = list(run.step_sources).map(shown);
  document.getElementById('footer').appendChild(el('p', null,
      'iotap report, schema ' + num(report.schema_version) +
          (sources.length ? '; steps from ' + sources.join(', ') : '') +
          '. Every number comes from the report embedded in this file (id "iotap-report"), ' +
          'the same data as `iotap report --format json`; nothing is fetched.'));
}

// A table whose columns sort on a click (again to reverse), with rows in
// groups that stay together (a trainer and its loaders): groups sort by their
// head row, members within their group. Large tables show their first 300
// rows (whole groups) and a button for the rest, so a run with thousands of
// processes stays fast.
//
// Each cell carries its sort key in data-value, for the browser tests.

const TABLE_FIRST_ROWS = 300;

// columns: [{label, num: bool, value(row) -> sort key, text(row) -> shown text,
//            cls: extra cell class}]
// groups: [{head: row, members: [row...]}]
function sortableTable(id, caption, columns, groups, footer) {
  const state = {column: -1, descending: true, limit: TABLE_FIRST_ROWS};
  const headCells = columns.map((c, i) => el('th', {
    class: c.num ? 'num' : '', scope: 'col', 'aria-sort': 'none', 'data-column': i,
    title: 'Sort by ' + c.label, on: {click: () => sortBy(i)},
  }, c.label));
  const table = el('table', {id, 'data-rows': groups.length},
      el('caption', {class: 'muted'}, caption),
      el('thead', null, el('tr', null, headCells)));
  const more = el('button', {type: 'button', class: 'more'});
  more.addEventListener('click', () => {
    state.limit = Infinity;
    fill();
  });
  if (footer) {
    table.appendChild(el('tfoot', null, el('tr', {class: 'total'}, columns.map((c) => cell(c, footer)))));
  }
  const wrap = el('div', {class: 'table-wrap'}, table, more);
  let bodies = [];

  function cell(column, row) {
    const value = column.value(row);
    return el('td', {class: (column.num ? 'num ' : '') + (column.cls || ''),
                     'data-value': typeof value === 'number' ? String(value) : shown(value)},
              column.text ? column.text(row) : shown(value));
  }

  function compare(column, a, b) {
    const x = column.value(a);
    const y = column.value(b);
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return state.descending ? -order : order;
  }

  function sortBy(index) {
    if (state.column === index) {
      state.descending = !state.descending;
    } else {
      state.column = index;
      state.descending = !!columns[index].num;
    }
    const column = columns[index];
    for (const g of groups) g.members.sort((a, b) => compare(column, a, b));
    groups.sort((a, b) => compare(column, a.head, b.head));
    headCells.forEach((th, i) => th.setAttribute(
        'aria-sort', i === index ? (state.descending ? 'descending' : 'ascending') : 'none'));
    fill();
  }

  function fill() {
    for (const body of bodies) body.remove();
    bodies = [];
    // Whole groups, until the rows shown reach the limit.
    let rows = 0;
    let count = 0;
    while (count < groups.length && rows < state.limit) rows += 1 + groups[count++].members.length;
    const shownGroups = groups.slice(0, count);
    const grouped = groups.some((g) => g.members.length > 0);
    if (!grouped) {
      const body = el('tbody', null, shownGroups.map((g) => el('tr', null, columns.map((c) => cell(c, g.head)))));
      bodies.push(body);
    } else {
      for (const g of shownGroups) {
        bodies.push(el('tbody', {class: 'group'},
            el('tr', {class: g.members.length > 0 ? 'head' : ''}, columns.map((c) => cell(c, g.head))),
            g.members.map((m) => el('tr', {class: 'member'}, columns.map((c) => cell(c, m))))));
      }
    }
    const foot = table.querySelector('tfoot');
    for (const body of bodies) table.insertBefore(body, foot);
    const total = groups.reduce((n, g) => n + 1 + g.members.length, 0);
    more.textContent = 'Show all ' + fmtCount(total) + ' rows';
    more.hidden = count === groups.length;
  }

  fill();
  return wrap;
}

// Columns shared by files and directories.
function fileColumns(pathLabel) {
  const pattern = (f) => {
    const p = f.read_pattern || {};
    const kinds = ['consecutive', 'sequential', 'strided', 'random'];
    const total = kinds.reduce((s, k) => s + num(p[k]), 0);
    if (total <= 0) return '';
    const top = kinds.reduce((best, k) => (num(p[k]) > num(p[best]) ? k : best), kinds[0]);
    return top + ' ' + fmtPercent(num(p[top]) / total);
  };
  return [
    {label: pathLabel, value: (f) => shown(f.path), cls: 'path'},
    {label: 'kind', value: (f) => f.category || f.kind || ''},
    {label: 'read', num: true, value: (f) => num(f.read_bytes), text: (f) => fmtBytes(f.read_bytes)},
    {label: 'reads', num: true, value: (f) => num(f.reads), text: (f) => fmtCount(f.reads)},
    {label: 'mean read', num: true, value: (f) => (num(f.reads) > 0 ? num(f.read_bytes) / num(f.reads) : 0),
     text: (f) => (num(f.reads) > 0 ? fmtBytes(num(f.read_bytes) / num(f.reads)) : '')},
    {label: 'time in reads', num: true, value: (f) => num(f.read_time_s), text: (f) => fmtDuration(f.read_time_s)},
    {label: 'written', num: true, value: (f) => num(f.write_bytes), text: (f) => fmtBytes(f.write_bytes)},
    {label: 'opens', num: true, value: (f) => num(f.opens), text: (f) => fmtCount(f.opens)},
    {label: 'metadata ops', num: true, value: (f) => num(f.metadata_ops), text: (f) => fmtCount(f.metadata_ops)},
    {label: 'read again', num: true, value: (f) => num(f.reread_bytes), text: (f) => fmtBytes(f.reread_bytes)},
    {label: 'pattern', value: pattern},
  ];
}

// Reads the report embedded in the page and builds every section from it.
// When done, the root element carries data-rendered="true",
// data-render-ms (milliseconds from navigation to charts drawn) and
// data-section-ms (the time each section took), which the browser tests and
// the benchmark read.

function readReport() {
  const node = document.getElementById('iotap-report');
  return JSON.parse(node ? node.textContent : '{}');
}

const sectionMs = {};

function renderSection(id, render, report) {
  const section = document.getElementById(id);
  const started = performance.now();
  try {
    render(report, section);
    sectionMs[id] = Math.round(performance.now() - started);
  } catch (error) {
    // A broken section must not hide the others; the console error fails the tests.
    console.error('iotap report: section ' + id + ': ' + (error && error.stack ? error.stack : error));
    section.appendChild(el('p', {class: 'warning'}, 'This section could not be drawn: ' + String(error)));
  }
}

function main() {
  let report;
  try {
    report = readReport();
  } catch (error) {
    console.error('iotap report: the embedded data is not valid JSON: ' + error);
    document.querySelector('main').appendChild(
        el('p', {class: 'warning'}, 'The report data in this file is damaged: ' + String(error)));
    document.documentElement.dataset.rendered = 'error';
    return;
  }
  renderSection('glance', renderGlance, report);
  renderSection('findings', renderFindings, report);
  renderSection('timeline', renderTimeline, report);
  renderSection('overlap', renderOverlap, report);
  renderSection('sizes', renderSizes, report);
  renderSection('python', renderPython, report);
  renderSection('tables', renderTables, report);
  renderSection('notes', renderNotes, report);
  renderFooter(report);
  document.documentElement.dataset.sectionMs = JSON.stringify(sectionMs);
  document.documentElement.dataset.renderMs = performance.now().toFixed(1);
  document.documentElement.dataset.rendered = 'true';
}

main();

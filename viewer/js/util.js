// Building blocks of the report page: elements made from text only, numbers
// with units, and the report's fields read with their proto3 defaults.
//
// The one rule of this page: text from the report (paths, commands, finding
// wording) reaches the document through textContent, createTextNode or
// setAttribute on an attribute that is never a URL, style or handler. No
// markup is ever parsed from data (no HTML-parsing property or call; checked by
// tests/viewer/check_sources.cmake).

const SVG_NS = 'http://www.w3.org/2000/svg';
const FORBIDDEN_ATTRIBUTES = /^(on|href$|src$|srcdoc$|style$|xlink:href$|action$|formaction$)/i;

function setAttributes(node, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (name === 'text') {
      node.textContent = String(value);
    } else if (name === 'class') {
      node.setAttribute('class', value);
    } else if (name === 'on') {
      for (const [type, handler] of Object.entries(value)) node.addEventListener(type, handler);
    } else {
      if (FORBIDDEN_ATTRIBUTES.test(name)) throw new Error('attribute not allowed: ' + name);
      node.setAttribute(name, String(value));
    }
  }
}

function appendChildren(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) {
      appendChildren(node, child);
    } else if (typeof child === 'string' || typeof child === 'number') {
      node.appendChild(document.createTextNode(String(child)));
    } else {
      node.appendChild(child);
    }
  }
}

// el('td', {class: 'num'}, 'text', otherNode): an HTML element.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttributes(node, attrs);
  appendChildren(node, children);
  return node;
}

// svg('rect', {x: 1, ...}): an SVG element.
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttributes(node, attrs);
  appendChildren(node, children);
  return node;
}

// A name from the user's system, shown so that control characters are
// visible and cannot break a line (invalid UTF-8 bytes already arrive as the
// text \xNN, as in every iotap output).
function shown(value) {
  return String(value === undefined || value === null ? '' : value).replace(
      /[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => {
        if (c === '\n') return '\\n';
        if (c === '\t') return '\\t';
        if (c === '\r') return '\\r';
        const code = c.charCodeAt(0);
        return code > 0xff ? '\\u' + code.toString(16).padStart(4, '0')
                           : '\\x' + code.toString(16).padStart(2, '0');
      });
}

// A layer as the page names it ("MAPPED" is the report's name for reads
// through file mappings), and what one of its reads is.
const LAYER_LABELS = new Map([['MAPPED', 'Mapped reads'], ['URING', 'io_uring'], ['WAIT', 'Waits'],
                               ['MARK', 'Markers']]);
const LAYER_READ_UNITS = new Map([['MAPPED', 'page faults'], ['URING', 'read requests']]);

function layerLabel(name) { return LAYER_LABELS.get(name) || shown(name); }

function layerReadUnit(name) { return LAYER_READ_UNITS.get(name) || 'reads'; }

// Numbers: proto3 JSON leaves out zeros and may write NaN or Infinity as strings.
function num(value) {
  const n = Number(value === undefined || value === null ? 0 : value);
  return Number.isFinite(n) ? n : 0;
}

function list(value) { return Array.isArray(value) ? value : []; }

function scaled(value, units, step, suffix) {
  let v = num(value);
  let u = 0;
  while (Math.abs(v) >= step && u + 1 < units.length) {
    v /= step;
    u++;
  }
  const digits = u === 0 ? 0 : (Math.abs(v) < 10 ? 2 : 1);
  return v.toFixed(digits) + ' ' + units[u] + suffix;
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
function fmtBytes(bytes) { return scaled(bytes, BYTE_UNITS, 1024, ''); }
function fmtRate(bytesPerSecond) { return scaled(bytesPerSecond, BYTE_UNITS, 1024, '/s'); }

function fmtDuration(seconds) {
  const s = num(seconds);
  const a = Math.abs(s);
  if (a >= 3600) return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
  if (a >= 120) return Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
  if (a >= 1 || a === 0) return s.toFixed(2) + ' s';
  if (a >= 1e-3) return (s * 1e3).toFixed(1) + ' ms';
  if (a >= 1e-6) return (s * 1e6).toFixed(1) + ' us';
  return (s * 1e9).toFixed(0) + ' ns';
}

function fmtCount(n) { return Math.round(num(n)).toLocaleString('en-US'); }
function fmtPercent(share) { return (num(share) * 100).toFixed(share < 0.1 && share > 0 ? 1 : 0) + '%'; }

// A value of `unit` as a person reads it.
function fmtUnit(value, unit) {
  switch (unit) {
    case 'bytes/s': return fmtRate(value);
    case 'bytes': return fmtBytes(value);
    case 's': return fmtDuration(value);
    case 'share': return fmtPercent(value);
    case 'cores': return num(value).toFixed(2) + ' cores';
    default: return String(Math.round(num(value) * 1000) / 1000) + (unit ? ' ' + unit : '');
  }
}

// Transfer size of log2 bucket k: "4 KiB" for [4 KiB, 8 KiB).
function log2Label(k) {
  const size = Math.pow(2, k);
  const unit = Math.floor(k / 10);
  return (size / Math.pow(1024, unit)) + ' ' + BYTE_UNITS[Math.min(unit, BYTE_UNITS.length - 1)];
}

// Colours for series, stable per name.
const PALETTE = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#0891b2', '#db2777', '#65a30d',
                 '#dc2626', '#4f46e5', '#0d9488', '#ca8a04', '#7c3aed'];
function colourFor(index) { return PALETTE[index % PALETTE.length]; }

// A canvas sized to its box in CSS pixels, drawn at the screen's resolution.
function sizeCanvas(canvas, cssHeight) {
  const ratio = window.devicePixelRatio || 1;
  const cssWidth = Math.max(200, canvas.parentElement.clientWidth || 800);
  canvas.style.height = cssHeight + 'px';
  canvas.width = Math.round(cssWidth * ratio);
  canvas.height = Math.round(cssHeight * ratio);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return {ctx, width: cssWidth, height: cssHeight};
}

function legend(entries) {
  return el('div', {class: 'legend'}, entries.map(([colour, label]) => {
    const swatch = el('span', {class: 'swatch'});
    swatch.style.background = colour;
    return el('span', null, swatch, label);
  }));
}

function tooltipAt(tip, box, x, y, text) {
  tip.textContent = text;
  tip.style.display = 'block';
  const left = Math.min(Math.max(0, x + 14), Math.max(0, box.clientWidth - tip.offsetWidth - 4));
  tip.style.left = left + 'px';
  tip.style.top = Math.max(0, y + 14) + 'px';
}

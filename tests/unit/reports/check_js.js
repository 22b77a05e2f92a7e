// check_js.js PAGE.html: runs the inline script of a report page against a minimal
// DOM stand-in and checks the timeline controls: zoom in (buttons, wheel) changes the
// plot transform and the readout, panning is clamped to the run, reset restores
// scale 1, clicking a bar opens its row. Exit 1 with a message on the first failure.
'use strict';
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const m = html.match(/<script>([\s\S]*?)<\/script>/);
const plot = html.match(/<g id="plot" data-x0="(\d+)" data-w="(\d+)" data-end-ns="(\d+)">/);
function fail(msg) { console.log('FAIL: ' + msg); process.exit(1); }
if (!m || !plot) fail('no script or no plot group');
const winListeners = {};
let zoomed = false;
class El {
  constructor(id) { this.id = id; this.attrs = {}; this.listeners = {}; this.style = {}; this.textContent = '';
    this.classList = { toggle: (c, v) => { if (c === 'zoomed') zoomed = v; } }; }
  getAttribute(a) { return a in this.attrs ? this.attrs[a] : null; }
  setAttribute(a, v) { this.attrs[a] = String(v); }
  addEventListener(t, f) { this.listeners[t] = f; }
  getBoundingClientRect() { return { left: 0, width: 1230 }; }
  closest() { return this.details || null; }
  scrollIntoView() { this.scrolled = true; }
}
const svg = new El('timeline'); svg.viewBox = { baseVal: { width: 1230 } };
const g = new El('plot');
g.attrs = { 'data-x0': plot[1], 'data-w': plot[2], 'data-end-ns': plot[3] };
const els = { timeline: svg, plot: g, tlinfo: new El('tlinfo'), zin: new El('zin'),
              zout: new El('zout'), zreset: new El('zreset'), 'op-3': new El('op-3') };
els['op-3'].details = { open: false };
global.document = { getElementById: (i) => els[i] || null };
global.window = { addEventListener: (t, f) => { winListeners[t] = f; } };
new Function(m[1])();
const scale = () => parseFloat(/scale\(([\d.]+),1\)/.exec(g.attrs.transform)[1]);
const shift = () => parseFloat(/translate\((-?[\d.e+-]+),0\)/.exec(g.attrs.transform)[1]);
if (scale() !== 1 || zoomed) fail('initial transform ' + g.attrs.transform);
if (!/^showing 0/.test(els.tlinfo.textContent)) fail('readout ' + els.tlinfo.textContent);
els.zin.listeners.click();
if (scale() !== 2 || !zoomed) fail('zoom in: ' + g.attrs.transform);
svg.listeners.wheel({ preventDefault() {}, deltaY: -1, clientX: 300 });
if (Math.abs(scale() - 2.5) > 1e-9) fail('wheel zoom: ' + g.attrs.transform);
// pan far right and far left: the plot never leaves the run's time range
svg.listeners.mousedown({ clientX: 500 }); winListeners.mousemove({ clientX: 1e6 }); winListeners.mouseup({});
const x0 = +plot[1], w = +plot[2];
if (Math.abs(shift() - x0 * (1 - scale())) > 1e-6) fail('pan clamp at start: ' + g.attrs.transform);
svg.listeners.mousedown({ clientX: 500 }); winListeners.mousemove({ clientX: -1e6 }); winListeners.mouseup({});
if (Math.abs(shift() - (x0 * (1 - scale()) + w - w * scale())) > 1e-6) fail('pan clamp at end: ' + g.attrs.transform);
els.zreset.listeners.click();
if (scale() !== 1 || zoomed) fail('reset: ' + g.attrs.transform);
els.zout.listeners.click();
if (scale() !== 1) fail('zoom out below 1: ' + g.attrs.transform);
svg.listeners.mousedown({ clientX: 10 }); winListeners.mouseup({});
svg.listeners.click({ target: { getAttribute: (a) => (a === 'data-op' ? '3' : null) } });
if (!els['op-3'].scrolled || !els['op-3'].details.open) fail('click on a bar does not open its row');
console.log('timeline script: ok');

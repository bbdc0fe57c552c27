// The front end of ttt's widgets (anywidget): the playable boards and the search explorer.
//
// Every view is drawn from the model's synced state; clicks go to the kernel as messages.
// The board shows the clicked mark at once and, while the computer thinks (or prepares, once per
// machine), refuses clicks on its squares and disables every control (a choice made then would
// only run after its move).
// The explorer holds the whole recorded search (its tree and what each step shows) and steps
// locally: a step never waits for the kernel.
// A tree picture (where dot cannot run) is drawn from its DOT text by Graphviz built for WebAssembly,
// a module the kernel sends once a page (ttt/widgets/picture.py).

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

function setStatus(e, text, kind) {
  setText(e, text);
  e.dataset.kind = kind || "info";
}

// --- the boards ---------------------------------------------------------------------------

function renderBoard(model, el) {
  const size = model.get("size");
  const root = h("div", { class: "ttt-widget " + (size === 3 ? "ttt-playable" : "ttt-bigboard") });
  let pending = null; // the square clicked, shown at once, until the kernel answers
  let refused = ""; // a refusal said here without asking the kernel

  // controls: side, computer, New game
  const sideButtons = ["X", "O"].map((s) =>
    h("button", { class: "ttt-side-choice", "data-side": s, type: "button", text: s, onclick: () => {
      if (model.get("side") !== s) { model.set("side", s); model.save_changes(); }
    } })
  );
  const opponent = h("select", { class: "ttt-opponent", "aria-label": "Computer", onchange: () => {
    model.set("opponent", opponent.value); model.save_changes();
  } });
  const newGame = h("button", { class: "ttt-new", type: "button", text: "New game", onclick: () => model.send({ new: true }) });
  root.append(h("div", { class: "ttt-controls" },
    h("span", { class: "ttt-control" }, h("span", { class: "ttt-label", text: "You play" }), h("span", { class: "ttt-side", role: "group" }, ...sideButtons)),
    h("label", { class: "ttt-control" }, h("span", { class: "ttt-label", text: "Computer" }), opponent),
    newGame));

  // the squares
  const squares = [];
  const board = h("div", { class: "ttt-board", "data-size": size });
  const square = (s, title) => {
    const b = h("button", { class: "ttt-square", type: "button", "data-square": s, title, onclick: () => clicked(s) });
    squares[s] = b;
    return b;
  };
  if (size === 3) {
    for (let s = 0; s < 9; s++) board.append(square(s, `square ${s}, (${Math.floor(s / 3)}, ${s % 3})`));
  } else {
    for (let b = 0; b < 9; b++) {
      const small = h("div", { class: "ttt-small-board", "data-board": b });
      for (let c = 0; c < 9; c++) small.append(square(9 * b + c, `board ${b}, cell ${c}`));
      board.append(small);
    }
  }
  const status = h("div", { class: "ttt-status", role: "status", "aria-live": "polite" });
  root.append(board, status);

  // the computer's thinking (3x3 only)
  let thinking = null, depth = null, depthText = null, panel = null, caption = null, treeView = null;
  if (model.get("can_think")) {
    thinking = h("input", { type: "checkbox", class: "ttt-thinking", onchange: () => { model.set("thinking", thinking.checked); model.save_changes(); } });
    depth = h("input", { type: "range", class: "ttt-thinking-depth", min: 1, max: 9, "aria-label": "moves deep", onchange: () => {
      model.set("thinking_depth", parseInt(depth.value, 10)); model.save_changes();
    }, oninput: () => setText(depthText, depth.value) });
    depthText = h("span", { class: "ttt-depth-value" });
    caption = h("div", { class: "ttt-caption" });
    treeView = makeTreeView();
    panel = h("div", { class: "ttt-thinking-panel" }, caption, treeView.el);
    root.append(h("div", { class: "ttt-controls ttt-thinking-row" },
      h("label", { class: "ttt-control" }, thinking, h("span", { text: "show the computer's thinking" })),
      h("label", { class: "ttt-control ttt-depth-control" }, h("span", { class: "ttt-label", text: "moves deep" }), depth, depthText)), panel);
  }

  function clicked(s) {
    if (model.get("busy") || pending !== null) { // refused, saying what the computer is doing (thinking, or preparing)
      const doing = model.get("busy") && model.get("status_kind") === "busy" ? model.get("status") : "The computer is thinking.";
      refused = `${doing} Your click was not played: wait for its move.`;
      draw();
      return;
    }
    refused = "";
    if (model.get("legal").includes(s)) {
      pending = s; // shown at once; the kernel confirms or refuses
      draw();
    }
    model.send({ click: s, turn: model.get("turn") });
  }

  function draw() {
    const marks = model.get("squares");
    const legal = new Set(model.get("legal"));
    const line = new Set(model.get("line"));
    const owners = model.get("owners");
    const playable = new Set(model.get("playable_boards"));
    const busy = model.get("busy") || pending !== null;
    const last = model.get("last");
    for (let s = 0; s < squares.length; s++) {
      const b = squares[s];
      let mark = marks[s] === "." ? "" : marks[s];
      if (s === pending && !mark) mark = model.get("side");
      setText(b, mark);
      b.dataset.mark = mark;
      b.classList.toggle("ttt-legal", legal.has(s) && !busy);
      b.classList.toggle("ttt-last", s === last);
      b.classList.toggle("ttt-pending", s === pending);
      b.classList.toggle("ttt-win", line.has(s));
    }
    if (size === 9) {
      board.querySelectorAll(".ttt-small-board").forEach((small, b) => {
        small.classList.toggle("ttt-open", playable.has(b) && !busy);
        small.dataset.owner = owners[b] || "";
      });
    }
    root.dataset.busy = String(busy);
    // while the computer thinks, no control can be used (a choice made now would only run after its move)
    for (const control of [...sideButtons, opponent, newGame, thinking, depth]) if (control) control.disabled = busy;
    root.dataset.stamp = String(model.get("stamp"));
    root.dataset.wonBy = model.get("won_by");
    board.classList.toggle("ttt-busy", busy);
    for (const b of sideButtons) b.setAttribute("aria-pressed", String(b.dataset.side === model.get("side")));
    const options = model.get("opponents");
    if (opponent.options.length !== options.length || [...opponent.options].some((o, i) => o.value !== options[i][1])) {
      opponent.replaceChildren(...options.map(([label, value]) => h("option", { value, text: label })));
    }
    opponent.value = model.get("opponent");
    if (refused) setStatus(status, refused, "error");
    else if (pending !== null) setStatus(status, `The computer (${model.get("opponent_label")}) is thinking…`, "busy");
    else setStatus(status, model.get("status"), model.get("status_kind"));
    if (thinking) {
      thinking.checked = model.get("thinking");
      depth.value = model.get("thinking_depth");
      setText(depthText, String(model.get("thinking_depth")));
      panel.hidden = !model.get("thinking");
      depth.parentElement.hidden = !model.get("thinking");
      setText(caption, model.get("thinking_caption"));
      treeView.load(model.get("thinking_tree"), { atEnd: true });
    }
  }

  model.on("change:stamp", () => { pending = null; refused = ""; draw(); });
  for (const name of ["thinking", "thinking_depth"]) model.on("change:" + name, draw);
  el.append(root);
  draw();
}

// --- the tree of a recorded search ---------------------------------------------------------
//
// `tree` (from the kernel, once per search): nodes in search order, each with the step it is
// entered (`enter`), finished (`done`), cut off (`cut`), the texts it shows from each step on
// (`texts`: [step, value, window]), its subtree's size; and per step the event's node, sentence
// and counts. A step only changes what each row shows. A Monte Carlo tree search (`visits`) also
// names, per step, the `path` of its iteration so far: those rows are marked `ttt-on-path`.

function makeTreeView() {
  const el = h("div", { class: "ttt-tree", tabindex: "0" });
  const state = { tree: null, rows: [], byId: new Map(), open: new Map(), k: 0 };

  function miniBoard(node) {
    const b = node.board;
    if (b.length === 9) {
      const grid = h("span", { class: "ttt-mini", "aria-label": "board " + b });
      for (let s = 0; s < 9; s++) {
        grid.append(h("span", { class: "ttt-mini-square" + (s === node.last ? " ttt-mini-last" : ""), "data-mark": b[s] === "." ? "" : b[s], text: b[s] === "." ? "" : b[s] }));
      }
      return grid;
    }
    return h("pre", { class: "ttt-mini-text", text: b });
  }

  function load(tree, { atEnd = false } = {}) {
    if (state.tree === tree) return;
    state.tree = tree;
    state.open = new Map();
    el.replaceChildren();
    state.rows = [];
    state.byId = new Map();
    if (!tree || !tree.nodes) return;
    const after = new Map(); // node id -> stubs shown after it (a cut-off, "… N more")
    for (const n of tree.nodes) {
      const row = { node: n, shown: null };
      const fold = h("button", { class: "ttt-fold", type: "button", onclick: () => {
        state.open.set(n.id, !isOpen(n, state.k)); show(state.k, { follow: false });
      } });
      row.value = h("span", { class: "ttt-value" });
      row.window = h("span", { class: "ttt-window" });
      row.fold = fold;
      row.el = h("div", { class: "ttt-node " + (n.max ? "ttt-max" : "ttt-min"), "data-node": n.id, style: `--depth:${n.depth}` },
        n.parent === null ? null : h("span", { class: "ttt-edge", text: n.move }),
        h("span", { class: "ttt-node-box" },
          h("span", { class: "ttt-node-head" }, (n.max ? "▲ MAX " : "▼ MIN "), h("span", { class: "ttt-node-id", text: "#" + n.id })),
          miniBoard(n), h("span", { class: "ttt-node-text" }, row.value, row.window), fold));
      state.rows.push(row);
      state.byId.set(n.id, row);
      el.append(row.el);
      for (const stub of tree.stubs.filter((s) => s.after === n.id)) {
        const srow = { stub, shown: null, el: h("div", { class: "ttt-stub " + stub.kind, "data-node": stub.node, style: `--depth:${stub.depth}`, text: stub.text }) };
        state.rows.push(srow);
        el.append(srow.el);
      }
    }
    show(atEnd ? tree.steps.length : 0, { follow: false });
  }

  function textAt(n, k) {
    let found = null;
    for (const t of n.texts) { if (t[0] <= k) found = t; else break; }
    return found || (n.parent === null ? n.texts[0] : null); // the root shows from step 0
  }

  function isOpen(n, k) {
    if (state.open.has(n.id)) return state.open.get(n.id);
    const tree = state.tree;
    if (n.parent === null || !(n.done > 0 && n.done <= k) || n.size <= 1) return true;
    if (k === tree.steps.length && tree.pv.includes(n.id)) return true;
    return state.current === n.id; // a finished subtree folds once the search moves on
  }

  // Show the search after its first k events; with `follow`, scroll the current node into view.
  function show(k, { follow = true } = {}) {
    const tree = state.tree;
    if (!tree || !tree.nodes) return;
    k = Math.max(0, Math.min(k, tree.steps.length));
    state.k = k;
    state.current = k ? tree.steps[k - 1].node : null;
    const hiddenUnder = new Set(); // nodes whose rows are hidden (not reached, or folded away)
    const end = k === tree.steps.length;
    const path = new Set(k && tree.steps[k - 1].path ? tree.steps[k - 1].path : []);
    for (const row of state.rows) {
      let visible;
      if (row.node) {
        const n = row.node;
        visible = n.parent === null || (n.enter <= k && !hiddenUnder.has(n.parent));
        const open = visible && isOpen(n, k);
        if (!visible || !open) hiddenUnder.add(n.id);
        if (visible) {
          const t = textAt(n, k);
          setText(row.value, t ? t[1] : "");
          setText(row.window, t ? t[2] : "");
          const folded = n.done > 0 && n.done <= k && n.size > 1 && n.parent !== null;
          row.fold.hidden = !folded;
          if (folded) setText(row.fold, open ? "▾ fold" : `▸ ${n.size} nodes, ${t ? t[1] : ""}`);
          row.el.classList.toggle("ttt-folded", folded && !open);
        }
        row.el.classList.toggle("ttt-current", visible && n.id === state.current);
        row.el.classList.toggle("ttt-on-path", visible && path.has(n.id));
        row.el.classList.toggle("ttt-pv", visible && end && tree.pv.includes(n.id));
      } else {
        const s = row.stub;
        visible = s.step <= k && !hiddenUnder.has(s.node);
      }
      if (row.shown !== visible) { row.el.hidden = !visible; row.shown = visible; }
    }
    if (follow && state.current !== null) {
      if (path.size) scrollTo([...path][0]); // an MCTS iteration's path: from its root, as far as fits
      scrollTo(state.current);
    }
  }

  // Scroll the tree's own box (never the page) so that node `id`'s box is inside it.
  function scrollTo(id) {
    const row = state.byId.get(id);
    if (!row || row.el.hidden) return;
    const box = row.el.querySelector(".ttt-node-box");
    const view = el.getBoundingClientRect(), r = box.getBoundingClientRect();
    const pad = 8;
    if (r.top < view.top + pad) el.scrollTop -= view.top + pad - r.top;
    else if (r.bottom > view.bottom - pad) el.scrollTop += r.bottom - (view.bottom - pad) + Math.min(60, view.height / 4);
    if (r.left < view.left + pad) el.scrollLeft -= view.left + pad - r.left;
    else if (r.right > view.right - pad) el.scrollLeft += r.right - (view.right - pad);
  }

  return { el, load, show, state };
}

// --- the search explorer -------------------------------------------------------------------

function renderExplorer(model, el) {
  const root = h("div", { class: "ttt-widget ttt-explorer", "data-lm-suppress-shortcuts": "true" });
  const cycle = { ".": "X", X: "O", O: "." };

  // choosing the search: position (typed or clicked), algorithm, order, depth
  const commit = () => { if (model.get("position") !== position.value) { model.set("position", position.value); model.save_changes(); } };
  const position = h("input", { class: "ttt-position", type: "text", spellcheck: "false", "aria-label": "Position", onchange: commit,
    onkeydown: (event) => { event.stopPropagation(); if (event.key === "Enter") commit(); } });
  const editor = h("div", { class: "ttt-editor" });
  const editSquares = [];
  for (let s = 0; s < 9; s++) {
    const b = h("button", { class: "ttt-edit-square", type: "button", "data-square": s, title: `square ${s}`, onclick: () => {
      const squares = boardText(model.get("position")).split("");
      squares[s] = cycle[squares[s]];
      const text = [0, 3, 6].map((r) => squares.slice(r, r + 3).join("")).join("/");
      model.set("position", text); model.save_changes();
    } });
    editSquares.push(b);
    editor.append(b);
  }
  const algorithm = h("select", { class: "ttt-algorithm", "aria-label": "Search", onchange: () => { model.set("algorithm", algorithm.value); model.save_changes(); } });
  const ordered = h("input", { type: "checkbox", class: "ttt-ordered", onchange: () => { model.set("ordered", ordered.checked); model.save_changes(); } });
  const depth = h("input", { type: "number", class: "ttt-depth", min: 1, max: 20, onchange: () => { model.set("depth", parseInt(depth.value, 10) || 1); model.save_changes(); } });
  const depthControl = h("label", { class: "ttt-control" }, h("span", { class: "ttt-label", text: "depth" }), depth);
  const iterations = h("input", { type: "number", class: "ttt-iterations", min: 1, max: 5000, onchange: () => {
    model.set("iterations", Math.max(1, parseInt(iterations.value, 10) || 1)); model.save_changes();
  } });
  const iterationsControl = h("label", { class: "ttt-control" }, h("span", { class: "ttt-label", text: "iterations" }), iterations);
  const orderedControl = h("label", { class: "ttt-control" }, ordered, h("span", { text: "best moves first" }));
  const choose = h("div", { class: "ttt-choose" },
    h("div", { class: "ttt-choose-fields" },
      h("label", { class: "ttt-control" }, h("span", { class: "ttt-label", text: "Position" }), position),
      h("div", { class: "ttt-controls" },
        h("label", { class: "ttt-control" }, h("span", { class: "ttt-label", text: "Search" }), algorithm),
        orderedControl, depthControl, iterationsControl)),
    editor);

  // stepping
  const view = makeTreeView();
  let timer = null;
  const back = h("button", { class: "ttt-back", type: "button", text: "◀ Back", onclick: () => go(view.state.k - 1) });
  const step = h("button", { class: "ttt-step", type: "button", text: "Step ▶", onclick: () => go(view.state.k + 1) });
  const play = h("button", { class: "ttt-play", type: "button", text: "▶ Play", onclick: () => (timer ? pause() : start()) });
  const speed = h("input", { class: "ttt-speed", type: "range", min: 50, max: 2000, step: 50, value: 400, "aria-label": "ms per step", oninput: () => {
    setText(speedText, `${speed.value} ms / step`); if (timer) { pause(); start(); }
  } });
  const speedText = h("span", { class: "ttt-label", text: "400 ms / step" });
  const follow = h("input", { type: "checkbox", class: "ttt-follow", checked: true, onchange: () => { if (follow.checked) view.show(view.state.k); } });
  const slider = h("input", { class: "ttt-slider", type: "range", min: 0, max: 0, value: 0, "aria-label": "step", oninput: () => go(parseInt(slider.value, 10)) });
  const sentence = h("div", { class: "ttt-sentence", role: "status" });
  const tally = h("div", { class: "ttt-counts" });
  const legend = h("div", { class: "ttt-legend" });
  const status = h("div", { class: "ttt-status" });
  const controls = h("div", { class: "ttt-controls ttt-step-controls" }, back, step, play,
    h("label", { class: "ttt-control" }, speed, speedText),
    h("label", { class: "ttt-control" }, follow, h("span", { text: "follow the search" })));
  root.append(choose, h("div", { class: "ttt-stepper" }, controls, slider, sentence, tally, status), legend, view.el);

  function start() {
    const steps = tree().steps.length;
    if (view.state.k >= steps) go(0);
    timer = setInterval(() => { if (view.state.k >= tree().steps.length) pause(); else go(view.state.k + 1); }, parseInt(speed.value, 10));
    setText(play, "■ Pause");
    play.classList.add("ttt-playing");
  }
  function pause() {
    clearInterval(timer);
    timer = null;
    setText(play, "▶ Play");
    play.classList.remove("ttt-playing");
  }
  function tree() { return model.get("tree") || { steps: [], nodes: [] }; }

  function go(k, { sync = true } = {}) {
    const t = tree();
    k = Math.max(0, Math.min(k, t.steps.length));
    view.show(k, { follow: follow.checked });
    slider.max = t.steps.length;
    slider.value = k;
    const n = t.steps.length;
    const s = k ? t.steps[k - 1] : null;
    setText(sentence, `Step ${k} of ${n}: ${s ? s.sentence : t.start || ""}`);
    if (t.visits) {
      const [nodes, done] = s ? s.counts : [0, 0];
      setText(tally, `Iterations done: ${done} of ${t.iterations || 0}. Nodes in the tree: ${nodes} of ${t.total || 0}.`);
    } else {
      const [nodes, cuts, pruned] = s ? s.counts : [0, 0, 0];
      setText(tally, `Nodes visited: ${nodes} of ${t.total || 0}. Cut-offs: ${cuts}, pruning ${pruned} move${pruned === 1 ? "" : "s"}.`);
    }
    setText(legend, t.legend || "");
    legend.hidden = !t.legend;
    back.disabled = k === 0;
    step.disabled = k === n;
    if (sync && model.get("step") !== k) { model.set("step", k); model.save_changes(); }
  }

  function drawChoices() {
    choose.hidden = !model.get("editable");
    if (position !== document.activeElement) position.value = model.get("position");
    const squares = boardText(model.get("position"));
    editor.hidden = !model.get("editor");
    editSquares.forEach((b, s) => { const m = squares[s] === "." ? "" : squares[s]; setText(b, m); b.dataset.mark = m; });
    const names = model.get("algorithms");
    if (algorithm.options.length !== names.length) algorithm.replaceChildren(...names.map((a) => h("option", { value: a, text: a })));
    algorithm.value = model.get("algorithm");
    ordered.checked = model.get("ordered");
    depth.value = model.get("depth");
    depthControl.hidden = model.get("algorithm") !== "depth-limited";
    if (iterations !== document.activeElement) iterations.value = model.get("iterations");
    iterationsControl.hidden = model.get("algorithm") !== "mcts";
    orderedControl.hidden = model.get("algorithm") === "mcts";
    setStatus(status, model.get("status"), model.get("status_kind"));
  }

  model.on("change:tree", () => { pause(); view.load(model.get("tree")); go(model.get("step"), { sync: false }); });
  model.on("change:step", () => { if (model.get("step") !== view.state.k) go(model.get("step"), { sync: false }); });
  for (const name of ["position", "algorithm", "ordered", "depth", "iterations", "status", "status_kind", "editable"]) model.on("change:" + name, drawChoices);
  el.append(root);
  drawChoices();
  view.load(model.get("tree"));
  go(model.get("step"), { sync: false });
  return () => pause();
}

// --- a search tree drawn in the browser --------------------------------------------------

// The Graphviz module, loaded once a page and shared by every tree picture on it (each widget's ES
// module is a module of its own, so the page's global object holds it). A failed load is forgotten,
// so the next picture asks again.
function loadGraphviz(model) {
  if (!globalThis.__tttGraphviz) {
    const loading = new Promise((resolve, reject) => {
      const answer = (msg, buffers) => {
        if (!msg || !("graphviz" in msg)) return;
        model.off("msg:custom", answer);
        if (!msg.graphviz || !buffers || !buffers.length) {
          reject(new Error("this copy of ttt has no WebAssembly Graphviz (install Graphviz's dot, or npm before make setup)"));
          return;
        }
        const url = URL.createObjectURL(new Blob([buffers[0]], { type: "text/javascript" }));
        import(url).then((viz) => viz.instance()).then(resolve, reject).finally(() => URL.revokeObjectURL(url));
      };
      model.on("msg:custom", answer);
      model.send({ want: "graphviz" });
    });
    globalThis.__tttGraphviz = loading;
    loading.catch(() => { if (globalThis.__tttGraphviz === loading) globalThis.__tttGraphviz = null; });
  }
  return globalThis.__tttGraphviz;
}

function renderDot(model, el) {
  const picture = h("div", { class: "ttt-tree-fit", style: "max-width:100%" });
  const status = h("div", { class: "ttt-status", role: "status" });
  el.append(h("div", { class: "ttt-widget ttt-dot-picture" }, picture, status));
  let latest = 0;
  const draw = async () => {
    const ticket = ++latest;
    setStatus(status, "Drawing the tree …", "busy");
    try {
      const viz = await loadGraphviz(model);
      const svg = viz.renderSVGElement(model.get("dot"));
      if (ticket !== latest) return;
      svg.classList.add("ttt-tree-picture");
      svg.style.maxWidth = "100%";
      svg.style.height = "auto";
      picture.replaceChildren(svg);
      setStatus(status, model.get("status"), model.get("status_kind"));
    } catch (error) {
      if (ticket === latest) setStatus(status, `The tree could not be drawn: ${error.message || error}`, "error");
    }
  };
  model.on("change:dot", draw);
  model.on("change:status", () => setStatus(status, model.get("status"), model.get("status_kind")));
  draw();
}

function boardText(text) {
  const squares = [...(text || "").toUpperCase()].filter((c) => "XO.-_".includes(c)).map((c) => ("-_".includes(c) ? "." : c));
  while (squares.length < 9) squares.push(".");
  return squares.slice(0, 9).join("");
}

export default {
  render({ model, el }) {
    const kind = model.get("kind");
    if (kind === "explorer") return renderExplorer(model, el);
    if (kind === "dot") return renderDot(model, el);
    return renderBoard(model, el);
  },
};

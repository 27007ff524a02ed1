(() => {
  const table = document.querySelector("table.repro-status");
  if (!table || table.dataset.ready) return;
  table.dataset.ready = "1";
  const body = table.tBodies[0];
  const original = [...body.children];
  const rows = original.filter(r => r.id.startsWith("status-"));
  const box = document.createElement("div");
  box.className = "status-filter";
  const text = document.createElement("input");
  text.type = "search";
  text.placeholder = "filter: an ID or words";
  text.setAttribute("aria-label", "filter the analyses by ID or words");
  box.append(text);
  const values = key => {
    const seen = new Map();
    for (const r of rows) for (const v of (r.dataset[key] || "").split("|")) if (v && !seen.has(v))
      seen.set(v, key === "verdict" ? Number(r.dataset.rank) : seen.size);
    return [...seen.keys()].sort((a, b) => seen.get(a) - seen.get(b));
  };
  const selects = ["paper", "verdict", "evidence"].map(key => {
    const s = document.createElement("select");
    s.dataset.key = key;
    s.setAttribute("aria-label", "only this " + key);
    s.add(new Option("every " + key, ""));
    for (const v of values(key)) s.add(new Option(v, v));
    box.append(s);
    return s;
  });
  const count = document.createElement("span");
  box.append(count);
  table.before(box);
  let sorted = false;
  const apply = () => {
    const words = text.value.trim().toLowerCase();
    let shown = 0;
    for (const r of rows) {
      const ok = selects.every(s => !s.value || (r.dataset[s.dataset.key] || "").split("|").includes(s.value))
        && (!words || r.textContent.toLowerCase().includes(words));
      r.hidden = !ok;
      shown += ok;
    }
    let head = null, any = false;
    const close = () => { if (head) head.hidden = sorted || !any; };
    for (const el of body.children) {
      if (el.classList.contains("paper")) { close(); head = el; any = false; } else if (!el.hidden) any = true;
    }
    close();
    count.textContent = shown + " of " + rows.length + " IDs shown";
  };
  text.addEventListener("input", apply);
  for (const s of selects) s.addEventListener("change", apply);
  const keys = [null, r => r.cells[1].textContent.trim().toLowerCase(), r => Number(r.dataset.rank),
                r => r.cells[3].textContent.trim().toLowerCase(), r => r.cells[4].textContent.trim().toLowerCase()];
  [...table.tHead.rows[0].cells].forEach((th, i) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = th.textContent;
    button.title = i ? "sort by this column (again: reverse)" : "the papers' order";
    th.textContent = "";
    th.append(button);
    let up = true;
    button.addEventListener("click", () => {
      if (!keys[i]) { sorted = false; body.append(...original); apply(); return; }
      const key = keys[i], dir = up ? 1 : -1;
      up = !up;
      sorted = true;
      body.append(...[...rows].sort((a, b) => { const x = key(a), y = key(b);
        return (x < y ? -dir : x > y ? dir : 0) || Number(a.dataset.rank) - Number(b.dataset.rank); }));
      apply();
    });
  });
  apply();
})();

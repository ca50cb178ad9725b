// The installer's page: no framework, no build. The server checks every field (POST
// /api/validate, the configuration package's rules) and runs the create flow; this page only
// shows what it answers.
"use strict";

const form = document.getElementById("wizard");

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
    credentials: "same-origin",
  });
  let data = {};
  try { data = await res.json(); } catch (e) { data = { error: res.statusText }; }
  return { status: res.status, data };
}

function provider() {
  return form.querySelector("input[name=INFRASTRUCTURE_PROVIDER]:checked").value;
}

// imported are the variables of an imported file that no field shows: they are kept as they are.
let imported = {};

// variables are the fields' values by variable name: those shown and not empty, over the
// imported variables no field shows.
function variables() {
  const out = { ...imported };
  for (const el of form.elements) {
    if (!el.name || el.closest("section[hidden], .field[hidden]")) continue;
    if (el.type === "radio" && !el.checked) continue;
    const v = el.value.trim();
    if (v !== "") out[el.name] = v;
  }
  return out;
}

function showProvider() {
  const p = provider();
  for (const el of document.querySelectorAll("[data-provider]")) el.hidden = el.dataset.provider !== p;
  const proxy = form.elements.TKG_HTTP_PROXY_ENABLED.value === "true";
  for (const el of document.querySelectorAll("[data-proxy]")) el.hidden = !proxy;
  const identity = form.elements.IDENTITY_MANAGEMENT_TYPE.value;
  for (const el of document.querySelectorAll("[data-identity]")) el.hidden = el.dataset.identity !== identity;
}

// touched are the fields the user has left, or imported: the errors of the others wait for the
// review, since a field not reached yet is no mistake.
const touched = new Set();

// showErrors puts each error at the field of the variable it names: every error with all, else
// those of the fields touched, and the errors that name no field.
function showErrors(checked, all) {
  for (const el of form.querySelectorAll(".error")) el.remove();
  for (const el of form.elements) { el.removeAttribute("aria-invalid"); el.removeAttribute("aria-describedby"); }
  let first = null;
  for (const [name, msgs] of Object.entries(checked.errors || {})) {
    if (!all && !touched.has(name)) continue;
    const el = form.elements[name];
    const field = el && (el.closest ? el.closest(".field") : null);
    if (!field || field.closest("section[hidden], .field[hidden]")) {
      checked.general = (checked.general || []).concat(msgs);
      continue;
    }
    const p = document.createElement("p");
    p.className = "error";
    p.id = name + "-error";
    p.textContent = msgs.join(" ");
    field.appendChild(p);
    el.setAttribute("aria-invalid", "true");
    el.setAttribute("aria-describedby", p.id);
    first = first || el;
  }
  document.getElementById("general").textContent = (checked.general || []).join(" ");
  return first;
}

// validate checks every field; only the answer to the latest call is shown.
let validations = 0;
async function validate() {
  const seq = ++validations;
  const { data } = await api("POST", "/api/validate", { variables: variables() });
  if (seq === validations) showErrors(data);
  return data;
}

function show(id) {
  for (const s of ["review", "deploy"]) document.getElementById(s).hidden = s !== id;
  form.hidden = id !== "wizard";
  if (id === "deploy" && !document.getElementById("clusters").hidden) showClusters();
  if (id !== "wizard") document.getElementById(id + "-h").focus?.();
}

let reviewedFile = "";

async function review() {
  const { status, data } = await api("POST", "/api/review", { variables: variables() });
  if (status !== 200) {
    const first = showErrors(data, true);
    if (data.error) document.getElementById("general").textContent = data.error;
    if (first) first.focus();
    return;
  }
  reviewedFile = data.file;
  // The deploy names the cluster the review did, also when the name was a default of its time.
  if (!form.elements.CLUSTER_NAME.value && data.name) form.elements.CLUSTER_NAME.value = data.name;
  document.getElementById("review-path").textContent = data.path;
  document.getElementById("review-file").textContent = data.file;
  document.getElementById("review-command").textContent = data.command;
  const defaults = document.getElementById("defaults");
  defaults.replaceChildren(...(data.defaults || []).map((d) => { const li = document.createElement("li"); li.textContent = d; return li; }));
  show("review");
}

function exportFile() {
  const blob = new Blob([reviewedFile], { type: "text/yaml" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = (form.elements.CLUSTER_NAME.value || "management-cluster") + ".yaml";
  a.click();
  URL.revokeObjectURL(a.href);
}

async function importFile(ev) {
  const file = ev.target.files[0];
  if (!file) return;
  const { status, data } = await api("POST", "/api/import", { file: await file.text() });
  const msgs = document.getElementById("import-messages");
  if (status !== 200) { msgs.textContent = data.error; return; }
  imported = {};
  const dropped = [];
  for (const [name, value] of Object.entries(data.variables)) {
    const el = form.elements[name];
    if (!el) { imported[name] = value; continue; }
    if (el instanceof RadioNodeList) {
      if (![...el].some((r) => r.value === value)) { dropped.push(name + ": " + value); continue; }
      for (const r of el) r.checked = r.value === value;
    } else if (el instanceof HTMLSelectElement && ![...el.options].some((o) => o.value === value)) {
      dropped.push(name + ": " + value);
    } else {
      el.value = value;
    }
    touched.add(name);
  }
  const notes = (data.general || []).concat(dropped.length ? ["Not taken, as this installer offers no such choice: " + dropped.join(", ")] : []);
  msgs.textContent = notes.join(" ") || "Imported " + file.name;
  showProvider();
  await validate();
}

// follow streams the deploy: every line from the first, so a reload or a second tab shows the
// whole log, and the steps' state.
let stream = null;
function follow() {
  show("deploy");
  const log = document.getElementById("deploy-log");
  log.textContent = "";
  if (stream) stream.close();
  stream = new EventSource("/api/deploy/log");
  // A reconnect replays the log from its first line.
  stream.addEventListener("open", () => { log.textContent = ""; });
  stream.addEventListener("line", (e) => { log.textContent += e.data + "\n"; });
  stream.addEventListener("status", (e) => showStatus(JSON.parse(e.data)));
  stream.addEventListener("end", () => { stream.close(); stream = null; });
}

function showStatus(st) {
  const words = { running: "Deploying…", succeeded: "Cluster created", failed: "The deploy failed" };
  document.getElementById("deploy-state").textContent = words[st.state] || st.state;
  document.getElementById("deploy-steps").replaceChildren(...(st.steps || []).map((s) => {
    const li = document.createElement("li");
    li.className = s.state;
    li.textContent = s.name + ": " + s.state + (s.seconds ? " (" + s.seconds + " s)" : "");
    return li;
  }));
  const failed = document.getElementById("deploy-failure");
  failed.hidden = !st.failure;
  if (st.failure) {
    const f = st.failure;
    document.getElementById("failure-text").textContent = (f.step ? "Step " + f.step + ": " : "") + f.cause + (st.log ? " (log: " + st.log + ")" : "");
    const kept = f.bootstrap && !f.cleanedUp;
    document.getElementById("resume-button").hidden = !kept;
    document.getElementById("cleanup-button").hidden = !kept;
  }
  document.getElementById("back-button").hidden = st.state === "running";
  const next = document.getElementById("deploy-next");
  next.hidden = !st.next;
  if (st.next) document.getElementById("next-commands").textContent = st.next.join("\n");
}

async function deploy() {
  const { status, data } = await api("POST", "/api/deploy", { variables: variables() });
  if (status !== 202) {
    show("wizard");
    showErrors(data, true);
    if (data.error) document.getElementById("general").textContent = data.error;
    return;
  }
  follow();
}

async function afterFailure(path) {
  const { status, data } = await api("POST", path);
  if (status >= 300) { document.getElementById("failure-text").textContent = data.error; return; }
  follow();
}

// connect reaches the vCenter as the deploy's checks will: first its certificate's thumbprint,
// for the user to accept, then the login and the lists to choose from.
async function connect() {
  const status = document.getElementById("vsphere-status");
  status.textContent = "Connecting…";
  const { data } = await api("POST", "/api/vsphere", { variables: variables() });
  const box = document.getElementById("thumbprint-box");
  box.hidden = !data.accept;
  if (data.accept) {
    document.getElementById("thumbprint-text").textContent = (data.configured
      ? "Warning: the certificate of vSphere " + data.host + " does not have the thumbprint VSPHERE_TLS_THUMBPRINT gives (" + data.configured +
        "): another server may be answering for it. Its thumbprint is " + data.thumbprint + "."
      : "The certificate of vSphere " + data.host + " has the SHA-1 thumbprint " + data.thumbprint + ".") +
      " Accept it only if it is your vCenter's (VSPHERE_TLS_THUMBPRINT).";
    box.dataset.thumbprint = data.thumbprint;
    status.textContent = "";
    document.getElementById("accept-thumbprint").focus();
    return;
  }
  if (!data.inventory) {
    showErrors(data, true);
    status.textContent = "Not connected";
    return;
  }
  showErrors({ errors: {} });
  const inv = data.inventory;
  for (const list of ["datacenters", "resourcePools", "datastores", "folders", "networks"]) {
    document.getElementById(list).replaceChildren(...(inv[list] || []).map((v) => { const o = document.createElement("option"); o.value = v; return o; }));
  }
  showOSImages(inv.osImages || []);
  const n = (list) => (inv[list] || []).length;
  status.textContent = "Connected to " + inv.version + ": " + n("datacenters") + " datacenter(s)" +
    (form.elements.VSPHERE_DATACENTER.value ? ", " + n("resourcePools") + " resource pool(s), " + n("datastores") + " datastore(s), " +
      n("folders") + " folder(s), " + n("networks") + " network(s), " + n("osImages") + " OS image(s) in " + form.elements.VSPHERE_DATACENTER.value : "");
}

// machineText says what a node size's VM has.
function machineText(m) {
  return m.numCPUs + " CPUs, " + m.memoryMiB / 1024 + " GiB of memory, " + m.diskGiB + " GiB of disk";
}

// showSizes offers TKG's node sizes, as the server's configuration package names them, in
// every size field, the first option being the role's default machine.
function showSizes(sizes, defaults) {
  for (const name of ["CONTROLPLANE_SIZE", "WORKER_SIZE"]) {
    const select = form.elements[name];
    const first = document.createElement("option");
    first.value = "";
    first.textContent = defaults[name] ? "default: " + machineText(defaults[name]) : "the default size";
    select.replaceChildren(first, ...sizes.map((s) => {
      const o = document.createElement("option");
      o.value = s.name;
      o.textContent = s.name + ": " + machineText(s);
      return o;
    }));
  }
}

// osImages are the datacenter's node OVA templates, as the vCenter last listed them.
let osImages = [];

// showOSImages offers the templates, each with the Kubernetes version of its release; those of
// the cluster's KUBERNETES_VERSION, when one is given, are said to be.
function showOSImages(images) {
  osImages = images;
  const select = document.getElementById("os-image");
  const version = form.elements.KUBERNETES_VERSION.value.trim();
  const first = document.createElement("option");
  first.value = "";
  first.textContent = images.length ? "Choose a template (or leave the OS to the release's default)" : "No node OVA template in this datacenter: import one (slipway vsphere ova import)";
  select.replaceChildren(first, ...images.map((img, i) => {
    const o = document.createElement("option");
    o.value = String(i);
    const matches = version && img.kubernetes && img.kubernetes.startsWith(version);
    o.textContent = img.path + ": " + img.osName + " " + img.osVersion + " " + img.osArch + ", Kubernetes " + (img.kubernetes || "unknown") +
      " (OVA " + img.ovaVersion + ")" + (matches ? ", for KUBERNETES_VERSION " + version : "");
    return o;
  }));
}

function chooseOSImage() {
  const img = osImages[Number(document.getElementById("os-image").value)];
  if (!img || document.getElementById("os-image").value === "") return;
  form.elements.OS_NAME.value = img.osName;
  form.elements.OS_VERSION.value = img.osVersion;
  form.elements.OS_ARCH.value = img.osArch;
  for (const name of ["OS_NAME", "OS_VERSION", "OS_ARCH"]) touched.add(name);
  validate();
}

form.addEventListener("change", (e) => {
  showProvider();
  if (e.target.name === "VSPHERE_DATACENTER" && document.getElementById("vsphere-status").textContent.startsWith("Connected")) connect();
});
document.getElementById("connect-button").addEventListener("click", connect);
document.getElementById("os-image").addEventListener("change", chooseOSImage);
document.getElementById("accept-thumbprint").addEventListener("click", () => {
  const box = document.getElementById("thumbprint-box");
  form.elements.VSPHERE_TLS_THUMBPRINT.value = box.dataset.thumbprint;
  box.hidden = true;
  connect();
});
form.addEventListener("focusout", (e) => {
  if (!e.target.name) return;
  touched.add(e.target.name);
  validate();
});
document.getElementById("review-button").addEventListener("click", review);
document.getElementById("edit-button").addEventListener("click", () => show("wizard"));
document.getElementById("export-button").addEventListener("click", exportFile);
document.getElementById("deploy-button").addEventListener("click", deploy);
document.getElementById("resume-button").addEventListener("click", () => afterFailure("/api/deploy/resume"));
document.getElementById("cleanup-button").addEventListener("click", () => afterFailure("/api/deploy/cleanup"));
document.getElementById("import-file").addEventListener("change", importFile);
document.getElementById("back-button").addEventListener("click", () => show("wizard"));

// showClusters lists the management cluster's workload clusters (`slipway ui`).
async function showClusters() {
  const { data } = await api("GET", "/api/clusters");
  const rows = (Array.isArray(data) ? data : []).map((c) => {
    const tr = document.createElement("tr");
    const packages = (c.packages || []).map((p) => p.name.split(".")[0] + ": " + p.state).join(", ");
    const simulated = c.reached ? ((c.simulated || []).join(", ") || "none") : "cluster not reached";
    for (const v of [c.name, c.namespace, c.status, c.controlplane, c.workers, c.kubernetes, c.tkr, packages, simulated]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    return tr;
  });
  document.getElementById("cluster-rows").replaceChildren(...rows);
}

// A page opened while a deploy runs, or after one, shows it.
(async () => {
  const { data: options } = await api("GET", "/api/options");
  showSizes(options.sizes || [], options.defaultMachines || {});
  if (options.mode === "workload") {
    // A workload cluster's identity management is its management cluster's.
    for (const el of document.querySelectorAll("[data-mode=management]")) el.hidden = true;
    document.getElementById("title").textContent = "slipway workload cluster installer";
    document.getElementById("same-as").textContent = "slipway cluster create -f FILE";
    document.getElementById("deploy-button").textContent = "Deploy workload cluster";
    for (const cni of ["calico", "none"]) {
      const o = document.createElement("option");
      o.value = o.textContent = cni;
      form.elements.CNI.appendChild(o);
    }
    document.getElementById("clusters").hidden = false;
    document.getElementById("refresh-button").addEventListener("click", showClusters);
    await showClusters();
  }
  showProvider();
  const { data } = await api("GET", "/api/deploy");
  if (data.state && data.state !== "none") follow();
})();

// Conversation page: new messages appear without a reload. Text is inserted as text, never as markup.
(function () {
  "use strict";
  var box = document.getElementById("messages");
  if (!box) { return; }
  var afterIn = parseInt(box.getAttribute("data-in") || "0", 10);
  var afterOut = parseInt(box.getAttribute("data-out") || "0", 10);
  function add(entry) {
    if (document.getElementById(entry.id)) { return; }
    var empty = document.getElementById("empty");
    if (empty) { empty.remove(); }
    var div = document.createElement("div");
    div.className = "msg " + (entry.who === "you" ? "you" : "wilson");
    div.id = entry.id;
    if (entry.where) {
      var where = document.createElement("span");
      where.className = "where";
      where.textContent = (entry.who === "you" ? "you" : "Wilson") + ", " + entry.where;
      div.appendChild(where);
    }
    var pre = document.createElement("pre");
    pre.textContent = entry.text;
    div.appendChild(pre);
    box.appendChild(div);
  }
  function look() {
    fetch("/api/messages?after_in=" + afterIn + "&after_out=" + afterOut, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.ok ? r.json() : {messages: []}; })
      .then(function (data) {
        data.messages.forEach(add);
        afterIn = Math.max(afterIn, data.after_in || 0);
        afterOut = Math.max(afterOut, data.after_out || 0);
      })
      .catch(function () {})
      .then(function () { setTimeout(look, 1500); });
  }
  setTimeout(look, 1500);
})();

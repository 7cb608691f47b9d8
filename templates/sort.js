/* A table of class "sortable" sorts by a column when its head is clicked (or Enter is pressed on it); a second
   click sorts the other way. A note row (class "reason" or "proscons") moves with the offer row above it. A cell
   that starts with a figure sorts as a number ("738 k" as 738,000), blanks and dashes last; words sort as words.
   Without script the page reads the same, in the report's own order. The page's Content-Security-Policy allows
   this script by its SHA-256 (procure/render/documents.py). */
document.addEventListener("DOMContentLoaded", function () {
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };
  function key(row, column) {
    var text = row.cells[column] ? row.cells[column].textContent.trim() : "";
    var m = text.replace(/,/g, "").replace(/\u2212/g, "-").match(/^(-?\d+(?:\.\d+)?)\s*([kM](?![a-z]))?/);
    if (m) return { n: parseFloat(m[1]) * (m[2] === "M" ? 1e6 : m[2] === "k" ? 1e3 : 1) };
    return /\w/.test(text) ? { t: text.toLowerCase() } : {};
  }
  function order(a, b) {
    if (a.n !== undefined && b.n !== undefined) return a.n - b.n;
    if (a.t !== undefined && b.t !== undefined) return a.t.localeCompare(b.t);
    return a.n !== undefined ? -1 : b.n !== undefined ? 1 : a.t !== undefined ? -1 : b.t !== undefined ? 1 : 0;
  }
  each(document.querySelectorAll("table.sortable"), function (table) {
    var head = table.tHead, body = table.tBodies[0], taken = [];
    each(head.rows, function (row, r) {
      var column = 0;
      each(row.cells, function (th) {
        while (taken[r] && taken[r][column]) column++;
        for (var i = r; i < r + th.rowSpan; i++) for (var j = 0; j < th.colSpan; j++) (taken[i] = taken[i] || [])[column + j] = 1;
        if (th.colSpan === 1) sortable(th, column);
        column += th.colSpan;
      });
    });
    function sortable(th, column) {
      th.tabIndex = 0;
      th.setAttribute("aria-sort", "none");
      function sort() {
        var up = th.getAttribute("aria-sort") !== "ascending", groups = [];
        each(head.querySelectorAll("th[aria-sort]"), function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        each(body.rows, function (row) {
          if (groups.length && row.matches(".reason, .proscons")) groups[groups.length - 1].push(row);
          else groups.push([row]);
        });
        groups.sort(function (a, b) {
          var x = key(a[0], column), y = key(b[0], column), blank = (x.n === undefined && x.t === undefined) - (y.n === undefined && y.t === undefined);
          return blank || (up ? order(x, y) : order(y, x));
        });
        each(groups, function (group) { each(group, function (row) { body.appendChild(row); }); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    }
  });
});

"""Intra-procedural taint with constant folding (fluxdrive/runtimes/static/checks/taint.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from fluxdrive.runtimes.static.checks.engine.taint import Flow


def _sink(source: str) -> str | None:
    """The taint of the argument of ``sink(...)`` in the one function of ``source``."""
    tree = ast.parse(textwrap.dedent(source))
    function = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    flow = Flow(function)
    call = next(n for n in ast.walk(function) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "sink")
    holding = [s for s in ast.walk(function) if isinstance(s, ast.stmt) and call in ast.walk(s) and s in flow.before]
    statement = holding[-1]  # the innermost: ast.walk goes breadth first
    return flow.taint_at(call.args[0], statement)


@pytest.mark.parametrize(
    "source",
    [
        # straight from the request, through formatting and methods
        "def f():\n    sink(f\"SELECT {request.args.get('q')}\")\n",
        "def f():\n    p = request.form['a']\n    q = 'x' + p.strip()\n    sink(q)\n",
        # a wrapper object around the request taints what its methods return
        "def f():\n    w = wrapper(request)\n    sink(w.get_form_parameter('a'))\n",
        # the tainted entry of a dict, a loop target, an unknown branch
        "def f():\n    m = {}\n    m['b'] = request.cookies.get('c')\n    sink(m['b'])\n",
        "def f():\n    for part in request.args.getlist('p'):\n        sink(part)\n",
        "def f(flag):\n    bar = 'safe'\n    if flag:\n        bar = request.args['x']\n    sink(bar)\n",
        "def f(cmd):\n    match cmd:\n        case 'a':\n            v = request.data\n        case _:\n            v = ''\n    sink(v)\n",
        # a dict read with .get, a ConfigParser entry, a list position, the environment
        "def f():\n    m = {'a': 'x'}\n    m['b'] = request.args['q']\n    sink(m.get('b'))\n",
        "def f():\n    c = configparser.ConfigParser()\n    c.set('s', 'k', request.form['v'])\n    sink(c.get('s', 'k'))\n",
        "def f():\n    lst = ['safe']\n    lst.append(request.args['q'])\n    sink(lst[1])\n",
        "def f():\n    lst = []\n    lst.append(request.args['q'])\n    sink(' '.join(lst))\n",
        # a constant subject still takes the tainted case
        "def f():\n    guess = 'ABC'[0]\n    match guess:\n        case 'A':\n            v = request.data\n        case _:\n            v = ''\n    sink(v)\n",
        # request.path of a handler with a variable URL rule is the client's
        "@app.route('/files/<name>')\ndef f(name):\n    sink(request.path.split('/')[2])\n",
        # what is found in a document parsed from the request is the request's
        "def f():\n    sink(lxml.etree.fromstring(request.data).xpath('//name')[0].text)\n",
        # the request held by an object: self.request
        "def f(self):\n    sink(self.request.form.get('a'))\n",
    ],
)
def test_tainted(source: str) -> None:
    assert _sink(source) is not None


@pytest.mark.parametrize(
    "source",
    [
        # the other entry of the same dict is a constant
        "def f():\n    m = {}\n    m['a'] = 'fixed'\n    m['b'] = request.args['x']\n    bar = m['a']\n    sink(bar)\n",
        # a constant condition picks the safe side; a dead branch never runs
        "def f():\n    num = 106\n    bar = 'ok' if 7 * 18 + num > 200 else request.args['x']\n    sink(bar)\n",
        "def f():\n    bar = request.args['x']\n    if 7 * 42 - 86 > 200:\n        bar = 'constant'\n    else:\n        bar = bar\n    sink(bar)\n",
        # numbers and truth values carry no text
        "def f():\n    sink(int(request.args['n']))\n",
        "def f():\n    sink(request.args['n'] == 'yes')\n",
        # a guard that returns validates what follows: an allow-list on a parsed URL, inside try too
        "def f():\n    bar = request.args['u']\n    try:\n        url = urlparse(bar)\n"
        "        if url.netloc not in ['a.com'] or url.scheme != 'https':\n            return 'no'\n"
        "    except ValueError:\n        return 'bad'\n    sink(bar)\n",
        "def f():\n    bar = request.args['id']\n    if \"'\" in bar:\n        return 'no quotes'\n    sink(bar)\n",
        "def f():\n    bar = request.args['n']\n    if not bar.isdigit():\n        return 'digits only'\n    sink(bar)\n",
        # reassigned before use
        "def f():\n    bar = request.args['x']\n    bar = 'safe!'\n    sink(bar)\n",
        # the constant entry read with .get, the constant ConfigParser key, the list position left after pop
        "def f():\n    m = {}\n    m['a'] = 'fixed'\n    m['b'] = request.args['x']\n    sink(m.get('a'))\n",
        "def f():\n    c = configparser.ConfigParser()\n    c.set('s', 'a', 'ok')\n    c.set('s', 'b', request.form['v'])\n"
        "    sink(c.get('s', 'a'))\n",
        "def f():\n    lst = []\n    lst.append('safe')\n    lst.append(request.args['q'])\n    lst.append('more')\n"
        "    lst.pop(0)\n    sink(lst[1])\n",
        # request.path of a handler serving one fixed rule is not the client's
        "@app.route('/benchmark/x', methods=['POST'])\ndef f():\n    parts = request.path.split('/')\n    sink(parts[1])\n",
        # constant string methods fold
        "def f():\n    bar = request.args['x']\n    if 'a,b'.split(',')[1] == 'b':\n        bar = 'fixed'\n    sink(bar)\n",
        # the environment is the operator's; the request's method and route are not the client's text;
        # a row looked up with the client's value is the database's
        "def f():\n    sink('ls ' + os.getenv('DIR'))\n",
        "def f():\n    sink(request.method + request.endpoint)\n",
        "def f():\n    user = db.execute('SELECT * FROM u WHERE name = ?', (request.form['n'],)).fetchone()\n"
        "    sink(user['id'])\n",
        "def f():\n    sink(request.args.get('page', type=int))\n",
        # nodes found in the server's document by a query from the request are the document's
        "def f():\n    root = lxml.etree.parse(open('staff.xml'))\n"
        "    sink(root.xpath(\"//e[@id='\" + request.args['id'] + \"']\")[0].text)\n",
        "def f():\n    root = ET.parse('staff.xml')\n    sink(elementpath.select(root, '//e[@id=' + request.args['id'] + ']'))\n",
        # a constant match subject takes only its case
        "def f():\n    guess = 'ABC'[1]\n    match guess:\n        case 'A':\n            v = request.data\n        case 'B':\n            v = 'bob'\n"
        "        case _:\n            v = request.data\n    sink(v)\n",
    ],
)
def test_clean(source: str) -> None:
    assert _sink(source) is None

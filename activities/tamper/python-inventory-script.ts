// The Python half of the test inventory (see test-inventory.ts): a script python3 runs with `-c`,
// reading a JSON list of file texts on stdin and printing one inventory per text (null when a text
// does not parse). It lives in a .ts module so the build carries it into dist/ (the image ships no
// source tree). It mirrors js-test-inventory.ts; python-syntax.ts runs it.

export const PYTHON_INVENTORY_SCRIPT = String.raw`
import ast
import collections
import copy
import json
import sys
import warnings

OUTSIDE_TESTS = '(outside tests)'
OPERATORS = {
    ast.Eq: '==', ast.NotEq: '!=', ast.Lt: '<', ast.LtE: '<=', ast.Gt: '>', ast.GtE: '>=',
    ast.Is: 'is', ast.IsNot: 'is not', ast.In: 'in', ast.NotIn: 'not in',
}
ONE_ARGUMENT = {'assertTrue', 'assertFalse', 'assertIsNone', 'assertIsNotNone'}
RAISES = {'pytest.raises', 'pytest.warns', 'self.assertRaises', 'self.assertRaisesRegex', 'self.assertWarns', 'self.assertWarnsRegex'}
EXITS = {'pytest.skip', 'pytest.xfail', 'pytest.exit', 'self.skipTest'}
CATCH_ALL = {'AssertionError', 'Exception', 'BaseException'}
FAILING = {'pytest.fail', 'self.fail'}
PATCHES = {'patch', 'mock.patch', 'unittest.mock.patch', 'mocker.patch'}
OBJECT_PATCHES = {p + suffix for p in PATCHES for suffix in ('.object', '.multiple')}
MATCH_CASE = getattr(ast, 'match_case', ())
TRY = (ast.Try, getattr(ast, 'TryStar', ast.Try))

Flow = collections.namedtuple('Flow', 'path test unreachable swallowed collectable')

def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return '.'.join(reversed(parts))

def collapse(text, limit):
    return ' '.join(text.split())[:limit]

def last_name(node):
    return (dotted(node) or '').split('.')[-1]

def swallows(handler):
    caught = handler.type
    names = [] if caught is None else [last_name(e) for e in (caught.elts if isinstance(caught, ast.Tuple) else [caught])]
    fails = any(isinstance(n, ast.Raise) or (isinstance(n, ast.Call) and dotted(n.func) in FAILING) for n in ast.walk(handler))
    return (caught is None or any(n in CATCH_ALL for n in names)) and not fails

def assignments(statements, scope, literal_only, is_literal):
    """Names bound exactly once in scope, with their values."""
    stores = collections.Counter(n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    values = {}
    for node in statements:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and stores[target.id] == 1 and (not literal_only or is_literal(value)):
            values[target.id] = value
    return values

def imported_modules(tree):
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split('.')[0]] = alias.name if alias.asname else alias.name.split('.')[0]
        elif isinstance(node, ast.ImportFrom):
            base = '.' * node.level + (node.module + '.' if node.module else '')
            for alias in node.names:
                names[alias.asname or alias.name] = base + alias.name
    return names

class Inline(ast.NodeTransformer):
    """Replaces a name bound once by its value, so renaming a variable changes no assertion's text."""

    def __init__(self, values, seen=frozenset()):
        self.values = values
        self.seen = seen

    def visit_Name(self, node):
        value = self.values.get(node.id)
        if value is None or node.id in self.seen or not isinstance(node.ctx, ast.Load):
            return node
        return Inline(self.values, self.seen | {node.id}).visit(copy.deepcopy(value))

class Reader:
    def __init__(self, text):
        self.text = text
        self.lines = text.splitlines()
        self.tree = ast.parse(text)
        self.tests = []
        self.buckets = {}
        self.values = {}
        self.module_values = assignments(self.tree.body, self.tree, True, self.is_literal)
        self.values = self.module_values

    def read(self):
        self.body(self.tree.body, Flow([], None, None, None, True))
        return {'tests': self.tests + list(self.buckets.values()), 'mocks': self.mocks()}

    def body(self, statements, flow):
        unreachable = flow.unreachable
        for statement in statements:
            self.statement(statement, flow._replace(unreachable=unreachable))
            unreachable = unreachable or self.exit_of(statement)

    def statement(self, node, flow):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if flow.collectable and node.name.startswith('test'):
                self.read_test(node, flow)
            else:
                self.body(node.body, flow._replace(collectable=False))
        elif isinstance(node, ast.ClassDef):
            self.body(node.body, flow._replace(path=flow.path + [node.name]))
        elif isinstance(node, ast.Assert):
            self.record(node, flow, *self.compared(node.test))
        elif isinstance(node, ast.If):
            self.calls(node.test, flow)
            condition = self.constant(node.test)
            dead = flow._replace(unreachable=flow.unreachable or self.quote(node))
            self.body(node.body, dead if condition is False else flow)
            self.body(node.orelse, dead if condition is True else flow)
        elif isinstance(node, TRY):
            handler = next((h for h in node.handlers if swallows(h)), None)
            self.body(node.body, flow._replace(swallowed=flow.swallowed or self.quote(handler)) if handler else flow)
            for statements in [h.body for h in node.handlers] + [node.orelse, node.finalbody]:
                self.body(statements, flow)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            self.read_with(node, flow)
        else:
            for _, value in ast.iter_fields(node):
                items = value if isinstance(value, list) else [value]
                self.body([v for v in items if isinstance(v, ast.stmt)], flow)
                for item in items:
                    if isinstance(item, ast.expr):
                        self.calls(item, flow)
                    elif MATCH_CASE and isinstance(item, MATCH_CASE):
                        self.body(item.body, flow)

    def read_test(self, node, flow):
        test = {'name': '::'.join(flow.path + [node.name]), 'line': node.lineno, 'assertions': []}
        self.tests.append(test)
        outer = self.values
        self.values = {**self.module_values, **assignments(ast.walk(node), node, False, self.is_literal)}
        self.body(node.body, flow._replace(test=test, collectable=False))
        self.values = outer

    def read_with(self, node, flow):
        swallowed = flow.swallowed
        for item in node.items:
            context = item.context_expr
            name = dotted(context.func) if isinstance(context, ast.Call) else None
            if name in RAISES:
                expected = context.args + [k.value for k in context.keywords]
                self.record(context, flow, self.canonical(node.body), name.replace('self.', ''), self.canonical(expected), False)
            elif name and name.split('.')[-1] == 'suppress' and any(last_name(a) in CATCH_ALL for a in context.args):
                swallowed = swallowed or self.quote(node)
            else:
                self.calls(context, flow)
        self.body(node.body, flow._replace(swallowed=swallowed))

    def exit_of(self, statement):
        """The statement (a return, pytest.skip(), an if whose taken branch does either) after which nothing runs."""
        if isinstance(statement, ast.Return):
            return self.quote(statement)
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and dotted(statement.value.func) in EXITS:
            return self.quote(statement)
        if isinstance(statement, ast.If):
            condition = self.constant(statement.test)
            then_exits = condition is not False and any(self.exit_of(s) for s in statement.body)
            else_exits = condition is not True and any(self.exit_of(s) for s in statement.orelse)
            if then_exits if condition is True else else_exits if condition is False else then_exits and else_exits:
                return self.quote(statement)
        return None

    def compared(self, test):
        if isinstance(test, ast.Compare):
            operator = ' '.join(OPERATORS[type(op)] for op in test.ops)
            return self.canonical([test.left]), operator, self.canonical(test.comparators), self.is_literal(test.left)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.canonical([test.operand]), 'not', '', self.is_literal(test.operand)
        if isinstance(test, ast.Call) and dotted(test.func) == 'isinstance' and len(test.args) == 2:
            return self.canonical(test.args[:1]), 'isinstance', self.canonical(test.args[1:]), self.is_literal(test.args[0])
        # A non-empty tuple is always true: 'assert (x == 1, "message")' checks nothing.
        always = isinstance(test, ast.Tuple) and bool(test.elts)
        return self.canonical([test]), 'truthy', '', always or self.is_literal(test)

    def calls(self, expression, flow):
        for node in ast.walk(expression):
            if isinstance(node, ast.Call):
                found = self.called_assertion(node)
                if found:
                    self.record(node, flow, *found)

    def called_assertion(self, call):
        """self.assertEqual(actual, expected), pytest.raises(E, f, x), mock.assert_called_once_with(…)."""
        name = dotted(call.func) or ''
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ''
        if name in RAISES:
            return self.canonical(call.args[1:]), name.replace('self.', ''), self.canonical(call.args[:1]), False
        if name.startswith(('self.assert', 'cls.assert')):
            expected = [] if method in ONE_ARGUMENT else call.args[1:2]
            return self.canonical(call.args[:1]), method, self.canonical(expected), not call.args or self.is_literal(call.args[0])
        if method.startswith('assert_'):
            expected = call.args + [k.value for k in call.keywords]
            return self.canonical([call.func.value]), method, self.canonical(expected), False
        return None

    def record(self, node, flow, actual, matcher, expected, literal):
        test = flow.test or self.bucket(flow.path, node.lineno)
        test['assertions'].append({
            'line': node.lineno, 'text': self.segment(node), 'actual': actual, 'matcher': matcher, 'expected': expected,
            'literal': bool(literal), 'unreachable': flow.unreachable, 'swallowed': flow.swallowed,
        })

    def bucket(self, path, line):
        name = '::'.join(path + [OUTSIDE_TESTS])
        return self.buckets.setdefault(name, {'name': name, 'line': line, 'assertions': []})

    def mocks(self):
        imports = imported_modules(self.tree)
        found = []
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call):
                continue
            name = dotted(node.func)
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == 'target'), None)
            second = node.args[1] if len(node.args) > 1 else None
            named = isinstance(first, ast.Constant) and isinstance(first.value, str)
            member = second.value if isinstance(second, ast.Constant) and isinstance(second.value, str) else ''
            if first is None:
                continue
            if (name in PATCHES and named) or (name == 'monkeypatch.setattr' and named and len(node.args) == 2):
                target, member = first.value, ''
            elif name in OBJECT_PATCHES or name == 'monkeypatch.setattr':
                target = self.module_of(first, imports)
            else:
                continue
            if target:
                found.append({'line': node.lineno, 'text': self.segment(node), 'target': target, 'member': member})
        return found

    def module_of(self, expression, imports):
        """The dotted module path an object expression was imported from: 'pricing' after 'from app import pricing'."""
        path = dotted(expression)
        if not path:
            return None
        root, _, rest = path.partition('.')
        base = imports.get(root)
        return base and (base + '.' + rest if rest else base)

    def canonical(self, nodes):
        return ', '.join(ast.unparse(Inline(self.values).visit(copy.deepcopy(n))) for n in nodes)

    def resolve(self, node):
        seen = set()
        while isinstance(node, ast.Name) and node.id in self.values and node.id not in seen:
            seen.add(node.id)
            node = self.values[node.id]
        return node

    def constant(self, node):
        node = self.resolve(node)
        if isinstance(node, ast.Constant):
            return bool(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.constant(node.operand)
            return None if inner is None else not inner
        return None

    def is_literal(self, node):
        node = self.resolve(node)
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.UnaryOp):
            return self.is_literal(node.operand)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return all(self.is_literal(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(k is not None and self.is_literal(k) for k in node.keys) and all(self.is_literal(v) for v in node.values)
        return False

    def quote(self, node):
        return {'line': node.lineno, 'text': collapse(self.lines[node.lineno - 1], 120)}

    def segment(self, node):
        return collapse(ast.get_source_segment(self.text, node) or ast.unparse(node), 200)

def inventory(text):
    if not isinstance(text, str):
        return None
    try:
        return Reader(text).read()
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None

warnings.simplefilter('ignore')
sys.stdout.write(json.dumps([inventory(t) for t in json.loads(sys.stdin.buffer.read().decode('utf-8'))]))
`;

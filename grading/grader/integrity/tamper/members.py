"""What the cell's own classes define: the names their methods give the instance or the
class (``self``, ``cls``), and the attributes the cell gives them; reaching those is not
reaching into a library's private parts."""

import ast


class OwnMembers:
    """``instances``: the first parameter of each method (not a staticmethod) of a class
    the cell defines. ``attributes``: the names bound in those classes' bodies (methods,
    class attributes) and the attributes the methods set on their instance
    (``self._cache = ...``)."""

    def __init__(self, tree: ast.Module):
        self.instances: set[str] = set()
        self.attributes: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    self.attributes.update(_bound_in_class_body(member))
                    parameters = _parameters(member)
                    if parameters and not _is_static(member):
                        self.instances.add(parameters[0])
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load)
                    and isinstance(node.value, ast.Name) and node.value.id in self.instances):
                self.attributes.add(node.attr)


def _bound_in_class_body(member: ast.AST) -> list[str]:
    if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [member.name]
    targets = []
    if isinstance(member, ast.Assign):
        targets = member.targets
    elif isinstance(member, ast.AnnAssign | ast.AugAssign):
        targets = [member.target]
    return [name.id for target in targets for name in ast.walk(target)
            if isinstance(name, ast.Name)]


def _parameters(member: ast.AST) -> list[str]:
    if not isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    return [argument.arg for argument in [*member.args.posonlyargs, *member.args.args]]


def _is_static(member: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in member.decorator_list)

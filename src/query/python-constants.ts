// The names Python's `ast.literal_eval` reads as constants: the literal parser's
// (src/query/python-syntax.ts), and what tells src/query/sort.ts a bare name from a literal.
export const PYTHON_CONSTANTS: Record<string, unknown> = { True: true, False: false, None: null };

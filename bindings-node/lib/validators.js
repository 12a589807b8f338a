'use strict';
// Validators: the core's JSON Schema engine as a validator (`jsonSchemaValidator`), and any
// validator the caller gives (a function, a zod-like `parse`/`safeParse`, a JSON Schema) in
// the core's definition format, a host one registered on the bridge.

const native = require('../native.js');
const { errorMessage, nativeSpec, toJson } = require('../values.js');
const { nativeCall } = require('./errors.js');
const { storable } = require('./arguments.js');
const { callback, register } = require('./bridge.js');

const SCHEMA = Symbol('phaseo.jsonSchema');

function formatIssues(error) {
  try {
    if (error && Array.isArray(error.issues)) {
      return error.issues
        .map((i) => (i.path && i.path.length ? `${i.path.join('.')}: ${errorMessage(i.message)}` : errorMessage(i.message)))
        .join('; ');
    }
  } catch { /* odd issues: the error's own text */ }
  return errorMessage(error);
}

/** A validator backed by the core's JSON Schema engine (draft 2020-12). */
function jsonSchemaValidator(schema) {
  const compiled = nativeCall(() => new native.NativeJsonSchema(nativeSpec(schema)));
  return {
    [SCHEMA]: schema,
    schema,
    safeParse(value) {
      const problem = compiled.check(toJson(value));
      return problem === null || problem === undefined
        ? { success: true, data: value }
        : { success: false, error: new Error(problem) };
    },
    parse(value) {
      const problem = compiled.check(toJson(value));
      if (problem !== null && problem !== undefined) throw new Error(problem);
      return value;
    },
  };
}

/** The Standard Schema interface of a validator (zod 4, Valibot, ArkType …), if it has one. */
function standardOf(validator) {
  const std = validator !== null && (typeof validator === 'object' || typeof validator === 'function')
    ? validator['~standard'] : undefined;
  return std && typeof std.validate === 'function' ? std : undefined;
}

/** The JSON Schema of what a Standard Schema accepts (the Standard JSON Schema interface,
 * draft 2020-12), else the validator's own `toJSONSchema()`. */
function describeStandard(std, validator) {
  const jsonSchema = std.jsonSchema;
  if (jsonSchema && typeof jsonSchema.input === 'function') {
    try { return jsonSchema.input({ target: 'draft-2020-12' }); } catch { /* below */ }
  }
  return describe(validator);
}

/** The first issue as `"<JSON pointer>: <message>"` (the core's spelling of input errors). */
function issueText(issues) {
  const issue = issues[0] ?? {};
  const path = Array.isArray(issue.path)
    ? issue.path.map((step) => (step !== null && typeof step === 'object' ? step.key : step))
      .map((key) => (typeof key === 'number' ? key : String(key)))
    : [];
  return native.inputProblem(path, errorMessage(issue.message ?? 'invalid value'));
}

/** A Standard Schema as a host validator: its output (defaults applied, values
 * transformed) is what the executor receives. */
function standardValidator(std, validator, describes) {
  return hostValidator((value) => {
    const finish = (outcome) => {
      if (!outcome.issues) return outcome.value;
      throw new Error(issueText(outcome.issues));
    };
    const outcome = std.validate(value);
    return outcome && typeof outcome.then === 'function' ? outcome.then(finish) : finish(outcome);
  }, describeStandard(std, validator), describes);
}

function describe(validator) {
  if (validator && typeof validator.toJSONSchema === 'function') {
    try { return validator.toJSONSchema(); } catch { return undefined; }
  }
  return undefined;
}


/** A registered validator function, described by `schema` when `describes` and known. */
function hostValidator(fn, schema, describes) {
  const spec = callback(register(fn));
  if (describes && schema !== undefined) spec.schema = schema;
  return spec;
}

/** A validator in the core's definition format: a JSON Schema, or a registered function
 * (`describes`: with the JSON Schema a schema library reports, which the core then shows
 * the model). */
function validatorSpec(validator, describes = true) {
  if (validator === undefined || validator === null) return undefined;
  if (validator[SCHEMA]) return validator[SCHEMA];
  const std = standardOf(validator);
  if (std) return standardValidator(std, validator, describes);
  if (typeof validator === 'function') return callback(register((v) => validator(v)));
  if (typeof validator.safeParse === 'function') {
    return hostValidator((value) => {
      const outcome = validator.safeParse(value);
      if (outcome.success) return outcome.data;
      throw new Error(formatIssues(outcome.error));
    }, describe(validator), describes);
  }
  if (typeof validator.parse === 'function') {
    return hostValidator((value) => {
      try { return validator.parse(value); } catch (error) { throw new Error(formatIssues(error)); }
    }, describe(validator), describes);
  }
  if (typeof validator === 'object') return storable(validator, 'schema');
  throw new TypeError('a validator must be a function, an object with parse()/safeParse(), or a JSON Schema');
}

module.exports = {
  jsonSchemaValidator,
  validatorSpec,
};

'use strict';
// What a run hands back: the result of `run`/`continueRun`/`recover` once it settles, and
// the stream result of `stream`/`continueStream` (its events, deltas and items, the final
// result, cancellation). Failures arrive as AgentErrors carrying the state.

const { errorMessage, parseJson, toJson } = require('../values.js');
const { stateOf, withStateJSON } = require('./state.js');
const { decodeError } = require('./errors.js');

async function settleRun(promise, prepared) {
  try {
    // A run polled on this thread hands its events to the listener right after each poll,
    // before its promise settles: no barrier needed.
    return stateOf(await promise);
  } catch (error) {
    throw decodeError(error);
  } finally {
    prepared.release();
  }
}

class AgentStreamResult {
  constructor(nativeStream, prepared) {
    this._native = nativeStream;
    this._prepared = prepared;
    this._result = null;
  }

  async *_items() {
    const cursor = this._native.cursor();
    for (;;) {
      let text;
      try {
        text = await cursor.next();
      } catch (error) {
        throw decodeError(error);
      }
      if (text === null) return;
      yield parseJson(text);
    }
  }

  async *_filter(pick) {
    for await (const item of this._items()) {
      if (item.type === 'result') return;
      const value = pick(item);
      if (value !== undefined) yield value;
    }
  }

  /** Every event, then `{type: "result", result}`. */
  getFullStream() { return this._items(); }
  /** Text deltas. */
  getTextStream() { return this._filter((e) => (e.type === 'response.output_text.delta' ? e.delta : undefined)); }
  /** Reasoning deltas. */
  getReasoningStream() { return this._filter((e) => (e.type === 'response.reasoning.delta' ? e.delta : undefined)); }
  /** Items (message, tool_call, tool_result, error, output). */
  getItemsStream() { return this._filter((e) => (e.type === 'response.item' ? e.item : undefined)); }
  /** `tool.*` events. */
  getToolStream() { return this._filter((e) => (e.type.startsWith('tool.') ? e : undefined)); }
  /** Every event (without the result). */
  getEventStream() { return this._filter((e) => e); }

  /** The final result (rejects if the run failed). */
  getResult() {
    if (!this._result) {
      this._result = (async () => {
        try {
          for await (const item of this._items()) {
            if (item.type === 'result') return withStateJSON(item.result);
          }
          throw new Error('stream ended without a result');
        } finally {
          this._prepared.release();
        }
      })();
    }
    return this._result;
  }

  /** The final output as text. */
  async getText() {
    const result = await this.getResult();
    const output = result.output;
    if (output === null || output === undefined) return '';
    return typeof output === 'string' ? output : toJson(output);
  }

  /** Cancels the run; resolves with its (cancelled) result. */
  async cancel(reason) {
    this._native.cancel(reason === undefined ? undefined : errorMessage(reason));
    return this.getResult();
  }

  then(onFulfilled, onRejected) { return this.getResult().then(onFulfilled, onRejected); }
  catch(onRejected) { return this.getResult().catch(onRejected); }
  finally(onFinally) { return this.getResult().finally(onFinally); }
  [Symbol.asyncIterator]() { return this.getFullStream(); }
}

module.exports = {
  AgentStreamResult,
  settleRun,
};

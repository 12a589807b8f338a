export const call = (id, name, args = {}) => ({ id, name, arguments: JSON.stringify(args) });
export const calls = (...list) => ({ toolCalls: list });
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A host model client recording its requests. */
export class RecordingClient {
  constructor(responses) {
    this.responses = [...responses];
    this.requests = [];
  }

  async generate(request) {
    this.requests.push(request);
    return this.responses.shift();
  }
}

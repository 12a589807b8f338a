# frozen_string_literal: true

module PhaseoAgentSdk
  # A streamed run (`agent.stream(...)`): the events as they happen, then the result. The
  # run's Ruby callbacks are served while the stream is read: read it to the end or call
  # `result`.
  class StreamResult
    include Enumerable

    def initialize(native, release)
      @native = native
      @release = release
      @events = []
      @finished = false
      @result = nil
      @error = nil
    end

    # Every event (a Hash with String keys), replayable: each call starts from the first.
    def full_stream
      Enumerator.new do |y|
        index = 0
        loop do
          while index < @events.size
            y << @events[index]
            index += 1
          end
          break if @finished

          pull
        end
      end
    end

    # Iterates the events (see `full_stream`).
    def each(&block) = full_stream.each(&block)

    # The text deltas of the answer, as they arrive.
    def text_stream
      full_stream.lazy.select { |e| e["type"] == "response.output_text.delta" }.map { |e| e["delta"] }
    end

    # The reasoning deltas, as they arrive.
    def reasoning_stream
      full_stream.lazy.select { |e| e["type"] == "response.reasoning.delta" }.map { |e| e["delta"] }
    end

    # The items the run produced (tool calls, results, messages).
    def item_stream
      full_stream.lazy.select { |e| e.key?("item") }.map { |e| e["item"] }
    end

    # The run's result (waits for the end); raises the run's AgentError.
    def result
      pull until @finished
      Internal.raise_error(@error) if @error

      @result
    end

    # Cancels the run.
    def cancel = @native.cancel

    private

    def pull
      kind, payload = Internal.native { @native.next_item }
      case kind
      when "event" then @events << Native.parse_json(payload)
      when "result" then @result = RunResult.new(payload)
      when "error" then @error = Internal.error_from_json(payload)
      else finish
      end
    end

    def finish
      @finished = true
      @release.call
    end
  end
end

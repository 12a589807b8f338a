# frozen_string_literal: true

module PhaseoAgentSdk
  @tracing_exit_hook = false

  class << self
    # Records a span tree per run (`invoke_agent`, `chat`, `execute_tool`: OpenTelemetry
    # GenAI conventions, made by the core) and exports it over OTLP HTTP/protobuf.
    #
    # Unset options come from the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
    # `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
    # `OTEL_SERVICE_NAME`). `capture_content: true` records tool arguments and results and
    # the model's messages (off: they may hold personal data). A run continued from a
    # paused state joins the paused run's trace, whatever language paused it. Remaining
    # spans are exported when the process exits; `flush_tracing` exports earlier. Bad
    # options raise DefinitionError naming the option.
    def enable_tracing(endpoint: nil, headers: nil, service_name: nil, capture_content: false)
      raise ArgumentError, "enable_tracing: headers must be a Hash" unless headers.nil? || headers.is_a?(Hash)

      Internal.native do
        Native.enable_tracing(endpoint&.to_s, headers && Internal.stringify(headers).transform_keys(&:to_s),
                              service_name&.to_s, capture_content ? true : false)
      end
      unless @tracing_exit_hook
        @tracing_exit_hook = true
        at_exit { shutdown_tracing_quietly }
      end
      nil
    end

    # Exports every span ended so far and waits for the collector's answer (raises
    # RuntimeError when the export failed).
    def flush_tracing
      Native.flush_tracing
      nil
    end

    # Exports what is left and turns tracing off.
    def shutdown_tracing
      Native.shutdown_tracing
      nil
    end

    # Whether tracing is on.
    def tracing_enabled? = Native.tracing_enabled?

    private

    def shutdown_tracing_quietly
      Native.shutdown_tracing
    rescue RuntimeError
      nil # an unreachable collector must not fail the process's exit
    end
  end
end

require "phaseo_agent_sdk"

# A model client of your own: any object with `generate(request)` (and optionally
# `stream(request) { |event| ... }` for streamed runs). Here it answers without a real model.
class EchoModel
  def generate(request)
    question = request.messages.last.content
    PhaseoAgentSdk::ModelResponse.new(
      message: PhaseoAgentSdk::Message.new(role: "assistant", content: "#{request.agent_id} heard: #{question}")
    )
  end
end

agent = PhaseoAgentSdk.create_agent(id: "support")
puts agent.run(input: "where is order A-7?", client: EchoModel.new).output

from phaseo_agent import create_agent


def echo_model(request):
    """A model client of your own: any function (or object with `generate`) from a request
    to a response; `async def` works too. Here it answers without calling a real model."""
    question = request["messages"][-1]["content"]
    return {"message": {"content": f"{request['agent_id']} heard: {question}"}}


agent = create_agent({"id": "support"})
print(agent.run(input="where is order A-7?", client=echo_model).output)

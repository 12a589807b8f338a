# frozen_string_literal: true

# The parameter types the typed-tool tests and the typed handoff worker share.
module TypedParams
  # One line of an order.
  class OrderLine < PhaseoAgentSdk::Params
    description "One line of the order"
    param :sku, String, required: true, description: "Stock keeping unit"
    param :quantity, Integer, required: true, description: "How many were bought"
  end

  # A refund the support desk may issue.
  class Refund < PhaseoAgentSdk::Params
    description "A refund for an order"
    param :order_id, String, required: true, description: "The order to refund"
    param :amount, Float, required: true, description: "Amount in euros"
    param :reason, String, required: true, one_of: %w[damaged late other], description: "Why the customer asks"
    param :lines, Array, of: OrderLine, description: "The lines refunded (all when left out)"
    param :customer, Hash, description: "Who is refunded" do
      param :email, String, required: true, description: "Where the receipt goes"
      param :vip, PhaseoAgentSdk::Boolean, default: false
    end
    param :note, String, description: "A note for the ledger"
  end

  # What a refund tool answers.
  class Receipt < PhaseoAgentSdk::Params
    param :order_id, String, required: true
    param :refunded, Float, required: true
    param :lines, Integer, required: true
  end

  # A category tree: a recursive type.
  class Category < PhaseoAgentSdk::Params
    param :name, String, required: true, description: "Category name"
    param :children, Array, of: self, description: "Sub-categories"
  end

  # The refund tool of the handoff: approval first, then a receipt from the typed input.
  def self.refund_tool(executions = [])
    PhaseoAgentSdk.typed_tool(id: "refund", description: "Refunds an order", params: Refund, returns: Receipt,
                              require_approval: true) do |refund, _runtime|
      executions << refund
      Receipt.decode("order_id" => refund.order_id, "refunded" => refund.amount,
                     "lines" => (refund.lines || []).sum(&:quantity))
    end
  end
end

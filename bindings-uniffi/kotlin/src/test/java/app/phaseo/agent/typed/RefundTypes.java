package app.phaseo.agent.typed;

import app.phaseo.agent.AgentSdk.Tool;
import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/** The refund of every binding's typed-tool tests (tests/typed-tools/refund_schema.json), as Java records. */
public final class RefundTypes {
    private RefundTypes() {
    }

    /** Why a customer asks for a refund. */
    public enum RefundReason {
        @JsonProperty("damaged") DAMAGED,
        @JsonProperty("late") LATE,
        @JsonProperty("other") OTHER,
    }

    /** One line of an order. */
    @JsonClassDescription("One line of the order")
    public record OrderLine(
        @JsonProperty(required = true) @JsonPropertyDescription("Stock keeping unit") String sku,
        @JsonProperty(required = true) @JsonPropertyDescription("How many were bought") int quantity) {
    }

    /** Who is refunded. */
    @JsonClassDescription("Who is refunded")
    public record Customer(
        @JsonProperty(required = true) @JsonPropertyDescription("Where the receipt goes") String email,
        @JsonProperty(defaultValue = "false") boolean vip) {
    }

    /** A refund the support desk may issue. */
    @JsonClassDescription("A refund for an order")
    public record Refund(
        @JsonProperty(value = "order_id", required = true) @JsonPropertyDescription("The order to refund") String orderId,
        @JsonProperty(required = true) @JsonPropertyDescription("Amount in euros") double amount,
        @JsonProperty(required = true) @JsonPropertyDescription("Why the customer asks") RefundReason reason,
        @JsonPropertyDescription("The lines refunded (all when left out)") List<OrderLine> lines,
        Customer customer,
        @JsonPropertyDescription("A note for the ledger") String note) {
    }

    /** What the refund tool answers. */
    public record Receipt(
        @JsonProperty(value = "order_id", required = true) String orderId,
        @JsonProperty(required = true) double refunded,
        @JsonProperty(required = true) int lines) {
    }

    /** A category tree: a recursive type. */
    public record Category(
        @JsonProperty(required = true) @JsonPropertyDescription("Category name") String name,
        @JsonPropertyDescription("Sub-categories") List<Category> children) {
    }

    /** The refund tool of the tests and the handoff worker: approval first, then a receipt. */
    public static Tool refundTool(List<Refund> executions) {
        return Tool.fromClass("refund", Refund.class, Receipt.class, (refund, context) -> {
            executions.add(refund);
            int lines = refund.lines() == null ? 0 : refund.lines().stream().mapToInt(OrderLine::quantity).sum();
            return new Receipt(refund.orderId(), refund.amount(), lines);
        }).withDescription("Refunds an order").withRequireApproval(true);
    }
}

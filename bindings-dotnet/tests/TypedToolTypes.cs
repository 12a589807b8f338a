using System.Collections.Generic;
using System.ComponentModel;
using System.ComponentModel.DataAnnotations;
using System.Linq;
using System.Threading.Tasks;
using PhaseoAgentSdk;

namespace PhaseoAgentSdk.Tests.Typed
{
    /// <summary>Why a customer asks for a refund.</summary>
    public enum RefundReason
    {
        /// <summary>Arrived broken.</summary>
        [JsonName("damaged")] Damaged,
        /// <summary>Arrived late.</summary>
        [JsonName("late")] Late,
        /// <summary>Anything else.</summary>
        [JsonName("other")] Other,
    }

    /// <summary>One line of an order.</summary>
    [Description("One line of the order")]
    public sealed class OrderLine
    {
        /// <summary>Stock keeping unit.</summary>
        [JsonName("sku"), Required, Description("Stock keeping unit")] public string Sku { get; set; }
        /// <summary>How many.</summary>
        [JsonName("quantity"), Required, Description("How many were bought")] public int Quantity { get; set; }
    }

    /// <summary>Who is refunded.</summary>
    [Description("Who is refunded")]
    public sealed class Customer
    {
        /// <summary>Where the receipt goes.</summary>
        [JsonName("email"), Required, Description("Where the receipt goes")] public string Email { get; set; }
        /// <summary>A valued customer.</summary>
        [JsonName("vip"), DefaultValue(false)] public bool Vip { get; set; }
    }

    /// <summary>A refund the support desk may issue (the same type as the other bindings'
    /// typed-tool tests: tests/typed-tools/refund_schema.json).</summary>
    [Description("A refund for an order")]
    public sealed class Refund
    {
        /// <summary>The order.</summary>
        [JsonName("order_id"), Required, Description("The order to refund")] public string OrderId { get; set; }
        /// <summary>Euros.</summary>
        [JsonName("amount"), Required, Description("Amount in euros")] public double Amount { get; set; }
        /// <summary>Why.</summary>
        [JsonName("reason"), Required, Description("Why the customer asks")] public RefundReason Reason { get; set; }
        /// <summary>The lines refunded.</summary>
        [JsonName("lines"), Description("The lines refunded (all when left out)")] public List<OrderLine> Lines { get; set; }
        /// <summary>Who.</summary>
        [JsonName("customer")] public Customer Customer { get; set; }
        /// <summary>For the ledger.</summary>
        [JsonName("note"), Description("A note for the ledger")] public string Note { get; set; }
    }

    /// <summary>What the refund tool answers.</summary>
    public sealed class Receipt
    {
        /// <summary>The order.</summary>
        [JsonName("order_id"), Required] public string OrderId { get; set; }
        /// <summary>Euros refunded.</summary>
        [JsonName("refunded"), Required] public double Refunded { get; set; }
        /// <summary>Items refunded.</summary>
        [JsonName("lines"), Required] public int Lines { get; set; }
    }

    /// <summary>A category tree: a recursive type.</summary>
    public sealed class Category
    {
        /// <summary>Its name.</summary>
        [JsonName("name"), Required, Description("Category name")] public string Name { get; set; }
        /// <summary>Sub-categories.</summary>
        [JsonName("children"), Description("Sub-categories")] public Category[] Children { get; set; }
    }

    /// <summary>The refund tool of the tests and the handoff worker.</summary>
    public static class RefundTool
    {
        /// <summary>Approval first, then a receipt from the typed input; records each refund.</summary>
        public static Tool Create(List<Refund> executions)
        {
            var tool = Tool.FromType<Refund, Receipt>("refund", (refund, rt) =>
            {
                lock (executions) executions.Add(refund);
                return Task.FromResult(new Receipt
                {
                    OrderId = refund.OrderId,
                    Refunded = refund.Amount,
                    Lines = (refund.Lines ?? new List<OrderLine>()).Sum(l => l.Quantity),
                });
            }, "Refunds an order");
            tool.RequireApproval = true;
            return tool;
        }
    }
}

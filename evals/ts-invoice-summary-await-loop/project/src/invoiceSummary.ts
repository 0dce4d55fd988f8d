import { Pool } from 'pg';

export interface InvoiceSummary {
  customerId: number;
  customerName: string;
  openInvoices: number;
  openCents: number;
}

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export class InvoiceSummaryService {
  constructor(
    private readonly pool: Pool,
    private readonly fetchPage: (cursor: string | null) => Promise<Page<{ id: string; cents: number }>>,
  ) {}

  async summariesForAccount(accountId: number): Promise<InvoiceSummary[]> {
    const { rows: customers } = await this.pool.query<{ id: number; name: string }>(
      'SELECT id, name FROM customers WHERE account_id = $1',
      [accountId],
    );

    const summaries: InvoiceSummary[] = [];
    for (const customer of customers) {
      const { rows } = await this.pool.query<{ n: string; cents: string }>(
        "SELECT COUNT(*) AS n, COALESCE(SUM(total_cents), 0) AS cents FROM invoices WHERE customer_id = $1 AND status = 'open'",
        [customer.id],
      );
      summaries.push({
        customerId: customer.id,
        customerName: customer.name,
        openInvoices: Number(rows[0].n),
        openCents: Number(rows[0].cents),
      });
    }
    return summaries;
  }

  async markReminded(invoiceIds: number[]): Promise<void> {
    for (const id of invoiceIds) {
      await this.pool.query('UPDATE invoices SET reminded_at = now() WHERE id = $1', [id]);
    }
  }

  async totalsByCustomer(customerIds: number[]): Promise<Map<number, number>> {
    const { rows } = await this.pool.query<{ customer_id: number; cents: string }>(
      'SELECT customer_id, SUM(total_cents) AS cents FROM invoices WHERE customer_id = ANY($1) GROUP BY customer_id',
      [customerIds],
    );
    return new Map(rows.map((r) => [r.customer_id, Number(r.cents)]));
  }

  async importExternal(): Promise<number> {
    let cursor: string | null = null;
    let imported = 0;
    do {
      const page = await this.fetchPage(cursor);
      imported += page.items.length;
      cursor = page.nextCursor;
    } while (cursor !== null);
    return imported;
  }
}

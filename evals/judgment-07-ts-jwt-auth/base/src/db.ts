import pg from "pg";

export const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

export interface Note {
  id: number;
  owner: string;
  title: string;
  body: string;
}

export async function notesOf(owner: string): Promise<Note[]> {
  const { rows } = await pool.query<Note>("SELECT id, owner, title, body FROM notes WHERE owner = $1", [owner]);
  return rows;
}

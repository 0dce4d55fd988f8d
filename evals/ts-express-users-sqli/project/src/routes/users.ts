import { Router, Request, Response, NextFunction } from 'express';
import { Pool } from 'pg';

const pool = new Pool({ connectionString: process.env.DATABASE_URL });
export const usersRouter = Router();

const SORTABLE = new Set(['created_at', 'email', 'last_login']);

interface UserRow {
  id: number;
  email: string;
  display_name: string;
  created_at: Date;
}

usersRouter.get('/users/:id', async (req: Request, res: Response, next: NextFunction) => {
  try {
    const { rows } = await pool.query<UserRow>(
      'SELECT id, email, display_name, created_at FROM users WHERE id = $1',
      [req.params.id],
    );
    if (rows.length === 0) {
      return res.status(404).json({ error: 'not found' });
    }
    res.json(rows[0]);
  } catch (err) {
    next(err);
  }
});

usersRouter.get('/users', async (req: Request, res: Response, next: NextFunction) => {
  try {
    const sort = SORTABLE.has(String(req.query.sort)) ? String(req.query.sort) : 'created_at';
    const { rows } = await pool.query<UserRow>(
      `SELECT id, email, display_name, created_at FROM users ORDER BY ${sort} DESC LIMIT 100`,
    );
    res.json(rows);
  } catch (err) {
    next(err);
  }
});

usersRouter.get('/users-by-domain', async (req: Request, res: Response, next: NextFunction) => {
  try {
    const domain = String(req.query.domain ?? '');
    const sql =
      "SELECT id, email, display_name, created_at FROM users WHERE email LIKE '%@" + domain + "'";
    const { rows } = await pool.query<UserRow>(sql);
    res.json(rows);
  } catch (err) {
    next(err);
  }
});

usersRouter.delete('/users/:id/sessions', async (req: Request, res: Response, next: NextFunction) => {
  try {
    const reason = req.body?.reason ?? 'admin';
    await pool.query("DELETE FROM sessions WHERE user_id = '" + req.params.id + "'");
    await pool.query('INSERT INTO audit_log (user_id, action, reason) VALUES ($1, $2, $3)', [
      req.params.id,
      'revoke_sessions',
      reason,
    ]);
    res.status(204).end();
  } catch (err) {
    next(err);
  }
});

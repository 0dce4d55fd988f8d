import type { NextFunction, Request, Response } from "express";
import jwt from "jsonwebtoken";

const JWT_SECRET = "c0a8f3e1b94d7e2265f1a9d08b7c4e3f5a6d2b1e9f8c7a6b";

export interface Claims {
  sub: string;
  role: "user" | "admin";
}

declare module "express-serve-static-core" {
  interface Request {
    claims?: Claims;
  }
}

export function issueToken(claims: Claims): string {
  return jwt.sign(claims, JWT_SECRET, { expiresIn: "12h" });
}

export function requireAuth(req: Request, res: Response, next: NextFunction): void {
  const header = req.headers.authorization ?? "";
  const token = header.replace(/^Bearer /, "");
  const claims = jwt.decode(token) as Claims | null;
  if (!claims) {
    res.status(401).json({ error: "unauthenticated" });
    return;
  }
  req.claims = claims;
  next();
}

export function requireAdmin(req: Request, res: Response, next: NextFunction): void {
  if (req.claims?.role !== "admin") {
    res.status(403).json({ error: "forbidden" });
    return;
  }
  next();
}

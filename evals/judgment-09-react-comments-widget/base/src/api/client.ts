export interface Review {
  id: string;
  productId: string;
  author: string;
  rating: number;
  html: string;
}

const BASE = "/api/v2";

export async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`${BASE}${path}`, { credentials: "same-origin" });
  if (!response.ok) {
    throw new Error(`${path}: HTTP ${response.status}`);
  }
  return (await response.json()) as T;
}

export function reviewsOf(productId: string): Promise<Review[]> {
  return getJson<Review[]>(`/products/${encodeURIComponent(productId)}/reviews`);
}

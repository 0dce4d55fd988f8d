"""In-memory user store used by the accounts blueprint (replaced by the DB layer in production)."""
import threading


class UserStore:
    def __init__(self):
        self._lock = threading.Lock()
        self._users = {}
        self._avatars = {}

    def insert(self, username, password_hash):
        with self._lock:
            if username in self._users:
                raise ValueError(f"user {username!r} exists")
            self._users[username] = {
                "username": username,
                "display_name": username,
                "bio": "",
                "password_hash": password_hash,
            }

    def get(self, username):
        with self._lock:
            user = self._users.get(username)
            return dict(user) if user else None

    def search(self, term):
        term = term.lower()
        with self._lock:
            return sorted(u for u in self._users if term in u.lower())[:20]

    def avatar_bytes(self, username):
        return self._avatars.get(username)

    def set_avatar(self, username, data: bytes):
        with self._lock:
            self._avatars[username] = data


users = UserStore()

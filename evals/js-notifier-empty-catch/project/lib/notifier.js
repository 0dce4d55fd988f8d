'use strict';

const fs = require('fs/promises');
const path = require('path');

const DEFAULT_PREFS = { email: true, sms: false, digest: 'daily' };

class Notifier {
  constructor({ mailer, sms, store, logger, configDir }) {
    this.mailer = mailer;
    this.sms = sms;
    this.store = store;
    this.logger = logger;
    this.configDir = configDir;
  }

  async loadPrefs(userId) {
    const file = path.join(this.configDir, `${Number(userId)}.json`);
    try {
      const raw = await fs.readFile(file, 'utf8');
      return { ...DEFAULT_PREFS, ...JSON.parse(raw) };
    } catch (err) {
      if (err.code === 'ENOENT') {
        return { ...DEFAULT_PREFS };
      }
      throw err;
    }
  }

  async notify(user, message) {
    const prefs = await this.loadPrefs(user.id);
    const sent = [];
    if (prefs.email) {
      try {
        await this.mailer.send({ to: user.email, subject: message.subject, text: message.body });
        sent.push('email');
      } catch (err) {}
    }
    if (prefs.sms && user.phone) {
      try {
        await this.sms.send(user.phone, message.body.slice(0, 160));
        sent.push('sms');
      } catch (err) {
        this.logger.warn({ err, userId: user.id }, 'sms delivery failed');
      }
    }
    try {
      await this.store.recordDelivery(user.id, message.id, sent);
    } catch (e) {
      // ignore
    }
    return sent;
  }

  async notifyAll(users, message) {
    const results = await Promise.allSettled(users.map((u) => this.notify(u, message)));
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length > 0) {
      this.logger.error({ count: failed.length }, 'some notifications failed');
    }
    return results.length - failed.length;
  }
}

module.exports = { Notifier, DEFAULT_PREFS };

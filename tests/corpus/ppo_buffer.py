import numpy as np
import torch


class RolloutBuffer:
    def __init__(self):
        self.states, self.actions, self.logprobs, self.rewards, self.values = [], [], [], [], []

    def clear(self):
        del self.states[:]
        del self.actions[:]
        del self.logprobs[:]
        del self.rewards[:]
        del self.values[:]


class PPO:
    def __init__(self, policy, policy_old, lr, k_epochs, eps_clip):
        self.policy = policy
        self.policy_old = policy_old
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
        self.buffer = RolloutBuffer()
        self.k_epochs, self.eps_clip = k_epochs, eps_clip
        self.mse = torch.nn.MSELoss()

    def select_action(self, state):
        with torch.no_grad():
            state = torch.FloatTensor(state)
            action, action_logprob, state_val = self.policy_old.act(state)
        self.buffer.states.append(state)
        self.buffer.actions.append(action)
        self.buffer.logprobs.append(action_logprob)
        self.buffer.values.append(state_val)
        return action.item()

    def update(self):
        rewards = torch.tensor(self.buffer.rewards, dtype=torch.float32)
        old_states = torch.stack(self.buffer.states).detach()
        old_actions = torch.stack(self.buffer.actions).detach()
        old_logprobs = torch.stack(self.buffer.logprobs).detach()
        for _ in range(self.k_epochs):
            logprobs, state_values, dist_entropy = self.policy.evaluate(old_states, old_actions)
            ratios = torch.exp(logprobs - old_logprobs)
            advantages = rewards - state_values.detach()
            surr1 = ratios * advantages
            surr2 = torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            loss = -torch.min(surr1, surr2) + 0.5 * self.mse(state_values, rewards) - 0.01 * dist_entropy
            self.optimizer.zero_grad()
            loss.mean().backward()
            self.optimizer.step()
        self.policy_old.load_state_dict(self.policy.state_dict())
        self.buffer.clear()

import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh())
        self.pi = nn.Linear(64, n_actions)
        self.v = nn.Linear(64, 1)

    def forward(self, x):
        h = self.body(x)
        return Categorical(logits=self.pi(h)), self.v(h)


def a2c(env, model, n_updates=1000, n_steps=5, gamma=0.99):
    optimizer = optim.Adam(model.parameters(), lr=7e-4)
    state = env.reset()
    for update in range(n_updates):
        log_probs, values, rewards, masks, entropy = [], [], [], [], 0
        for _ in range(n_steps):
            dist, value = model(torch.FloatTensor(state))
            action = dist.sample()
            next_state, reward, done, _ = env.step(action.numpy())
            log_probs.append(dist.log_prob(action))
            entropy += dist.entropy().mean()
            values.append(value)
            rewards.append(torch.FloatTensor(reward).unsqueeze(1))
            masks.append(torch.FloatTensor(1 - done).unsqueeze(1))
            state = next_state
        _, next_value = model(torch.FloatTensor(next_state))
        returns = compute_returns(next_value, rewards, masks, gamma)
        log_probs = torch.cat(log_probs)
        returns = torch.cat(returns).detach()
        values = torch.cat(values)
        advantage = returns - values
        actor_loss = -(log_probs * advantage.detach()).mean()
        critic_loss = advantage.pow(2).mean()
        loss = actor_loss + 0.5 * critic_loss - 0.001 * entropy
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

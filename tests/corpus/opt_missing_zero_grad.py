"""Linear regression and a policy-gradient agent; the first never clears gradients."""
import gym
import torch
import torch.nn as nn
from torch.distributions import Categorical


def fit_linear(x, y, epochs=500, lr=1e-3):
    model = nn.Linear(x.shape[1], 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    criterion = nn.MSELoss()
    for epoch in range(epochs):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()  # expect: MEM304
        if epoch % 50 == 0:
            print(epoch, loss.item())
    return model


class Policy(nn.Module):
    def __init__(self, obs, act):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs, 128), nn.Tanh(), nn.Linear(128, act))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


def reinforce(episodes=1000, gamma=0.99):
    env = gym.make("CartPole-v1")
    policy = Policy(4, 2)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for episode in range(episodes):
        state, _ = env.reset()
        log_probs, rewards = [], []
        done = False
        while not done:
            probs = policy(torch.as_tensor(state, dtype=torch.float32))
            dist = Categorical(probs)
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            state, reward, terminated, truncated, _ = env.step(action.item())
            rewards.append(reward)
            done = terminated or truncated
        returns, g = [], 0.0
        for r in reversed(rewards):
            g = r + gamma * g
            returns.insert(0, g)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = -(torch.stack(log_probs) * returns).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

import gym
import torch


def evaluate_policy(policy, env_name, episodes=10):
    env = gym.make(env_name)
    policy.eval()
    returns = []
    for ep in range(episodes):  # expect: MEM201
        obs, _ = env.reset()
        done, total = False, 0.0
        while not done:
            action = policy(torch.as_tensor(obs, dtype=torch.float32)).argmax().item()
            obs, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            total += reward
        returns.append(total)
    return sum(returns) / len(returns)

# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::failed_targets' do
  it 'names every failed target with its error, and no other' do
    results = [
      { 'target' => 'load1', 'status' => 'failure', 'value' => { '_error' => { 'msg' => 'step must be a positive integer; got 0' } } },
      { 'target' => 'load2', 'status' => 'success', 'value' => { 'ok' => true } },
      { 'target' => 'load3', 'status' => 'failure', 'value' => {} },
    ]
    is_expected.to run.with_params(results).and_return('load1: step must be a positive integer; got 0; load3: failed without a message')
  end

  it 'is empty when none failed' do
    is_expected.to run.with_params([{ 'target' => 'load1', 'status' => 'success', 'value' => {} }]).and_return('')
  end
end
